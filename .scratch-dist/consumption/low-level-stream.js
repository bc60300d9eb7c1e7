import { streamReadAheadBytesMax, timerDelayMsMax } from '../core/limits.js';
import { StreamBatcher } from './batcher.js';
export async function runLowLevelStream(reader, sink, spec, signal) {
    const batcher = new StreamBatcher(spec.params, spec.partitions, spec.monotonicMs());
    const readCursor = new Map(spec.partitions.map((p) => [p.partition, p.after]));
    const perPartitionBytes = Math.max(streamReadAheadBytesMax / spec.partitions.length, 1_000_000);
    while (!signal.aborted) {
        let readSomething = false;
        for (const { partition } of spec.partitions) {
            const room = batcher.capacity(partition);
            if (room === 0)
                continue;
            const after = readCursor.get(partition);
            const events = await reader.read(spec.topic, Number(partition), after, room, perPartitionBytes);
            if (events.length > 0) {
                batcher.offer(partition, events);
                readCursor.set(partition, events[events.length - 1].offset);
                readSomething = true;
            }
        }
        if (signal.aborted)
            break;
        const { batches, done, wakeAtMs } = batcher.poll(spec.monotonicMs());
        for (const b of batches) {
            if (!sink.write(spec.encode(b)))
                await sink.drain();
            if (signal.aborted)
                return 'client_closed';
        }
        if (done)
            return 'limit';
        if (readSomething || batches.length > 0)
            continue;
        await waitForWork(reader, spec, batcher, readCursor, wakeAtMs - spec.monotonicMs(), signal);
    }
    return 'client_closed';
}
/** Sleeps until events arrive on a partition that can take them, the deadline passes, or abort. */
async function waitForWork(reader, spec, batcher, readCursor, delayMs, signal) {
    const round = new AbortController();
    const onAbort = () => round.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const waits = [];
    for (const { partition } of spec.partitions) {
        if (batcher.capacity(partition) === 0)
            continue;
        // A waiter that rejects after the race is decided must not become an unhandled rejection.
        waits.push(reader.waitForEvents(spec.topic, Number(partition), readCursor.get(partition), round.signal).catch(() => undefined));
    }
    let timer;
    if (Number.isFinite(delayMs)) {
        waits.push(new Promise((resolve) => (timer = setTimeout(resolve, Math.min(timerDelayMsMax, Math.max(0, delayMs))))));
    }
    waits.push(new Promise((resolve) => round.signal.addEventListener('abort', () => resolve(), { once: true })));
    try {
        await Promise.race(waits);
    }
    finally {
        if (timer !== undefined)
            clearTimeout(timer);
        round.abort();
        signal.removeEventListener('abort', onAbort);
    }
}
//# sourceMappingURL=low-level-stream.js.map