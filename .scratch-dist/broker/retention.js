export async function runRetentionOnce(eventTypes, store, clock, log) {
    let removed = 0;
    const now = clock.nowMs();
    for (const rec of [...eventTypes]) {
        const cutoff = now - rec.eventType.options.retention_time;
        for (const p of rec.storage.partitions) {
            try {
                const n = await store.applyRetention(rec.storage.topic, Number(p), cutoff);
                if (n > 0)
                    log.info({ eventType: rec.eventType.name, partition: p, removed: n }, 'retention removed events');
                removed += n;
            }
            catch (err) {
                log.error({ err, eventType: rec.eventType.name, partition: p }, 'retention failed');
            }
        }
    }
    return removed;
}
export function startRetention(every, eventTypes, store, clock, log) {
    let running = Promise.resolve();
    const timer = setInterval(() => {
        running = running.then(() => runRetentionOnce(eventTypes(), store, clock, log));
    }, every);
    timer.unref();
    return {
        async stop() {
            clearInterval(timer);
            await running;
        },
    };
}
//# sourceMappingURL=retention.js.map