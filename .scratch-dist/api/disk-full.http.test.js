// Goal: a full disk is a clear, retriable refusal and nothing more: publishes that cannot be stored get
// a 207 whose items say `failed` at the `publishing` step with the storage engine's reason; metadata
// writes get a 503; the node does not stop and keeps serving; every event acknowledged before stays
// readable, in order, and no event of a refused batch ever appears; once space is freed, publishing
// and metadata writes resume on their own.
// Method: a real broker whose data directory is a small tmpfs mounted by the test (so RocksDB gets a
// real ENOSPC), which is grown while the broker runs. Mounting needs root: without it the test is
// skipped with a message saying so (CI runs as root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestBroker } from '../testing/broker-harness.js';
import { closeAllStreams, cursorsHeader, eventually, openStream, readUntil } from '../testing/stream-client.js';
const isRoot = process.getuid?.() === 0;
const mountPoint = mkdtempSync(join(tmpdir(), 'brook-full-'));
function mount(args) {
    return spawnSync('mount', args, { stdio: 'ignore' }).status === 0;
}
const canMount = isRoot && mount(['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint]);
test('disk full: 207 with the reason, acknowledged events intact, refused batches absent, publishing resumes when space is freed', { skip: canMount ? false : 'needs root to mount a small tmpfs' }, async () => {
    const b = await startTestBroker({ metadataTimeoutMs: 1500 }, join(mountPoint, 'data'));
    try {
        const name = 'disk.full';
        const created = await call(b.url, 'POST', '/event-types', { name, owning_application: 'test', category: 'undefined', schema: { type: 'json_schema', schema: '{}' } });
        assert.equal(created.status, 201);
        const pad = 'x'.repeat(4000);
        const batch = (n) => Array.from({ length: 100 }, (_, j) => ({ id: `${n}-${j}`, pad }));
        // Publish ~400 KB batches until the disk refuses one (16 MB of tmpfs: well within 200 batches).
        let acked = 0;
        let refused;
        const refusedIds = new Set();
        for (let n = 0; n < 200 && refused === undefined; n++) {
            const r = await call(b.url, 'POST', `/event-types/${name}/events`, batch(n));
            if (r.status === 200)
                acked++;
            else {
                refused = { status: r.status, body: r.body };
                for (const e of batch(n))
                    refusedIds.add(e.id);
            }
        }
        assert.ok(refused !== undefined, 'the disk filled up');
        assert.ok(acked > 0);
        assert.equal(refused.status, 207);
        const items = refused.body;
        assert.equal(items.length, 100);
        for (const it of items) {
            assert.equal(it.publishing_status, 'failed');
            assert.equal(it.step, 'publishing');
            assert.match(it.detail, /storage failed: write not applied: .*(space|IO error)/i);
            assert.doesNotMatch(it.detail, new RegExp(mountPoint), 'no directory of the broker reaches the client');
        }
        // The broker serves on: every acknowledged event, in order.
        const begin = cursorsHeader([{ partition: '0', offset: 'BEGIN' }]);
        const readAll = async (n) => {
            const lines = await readUntil(await openStream(b.url, name, 'batch_limit=1000&batch_flush_timeout=1', begin), (ls) => ls.reduce((s, l) => s + (l.events?.length ?? 0), 0) >= n, 20_000);
            return lines.flatMap((l) => (l.events ?? []).map((e) => String(e['id'])));
        };
        const before = await readAll(acked * 100);
        assert.equal(before.length, acked * 100);
        assert.deepEqual(before, Array.from({ length: acked }, (_, n) => batch(n).map((e) => e.id)).flat());
        // Metadata cannot be written either: a retriable 503 after the metadata timeout, not a stopped
        // node; what is applied stays readable.
        const meta = await call(b.url, 'POST', '/event-types', { name: 'disk.meta', owning_application: 'test', category: 'undefined', schema: { type: 'json_schema', schema: '{}' } });
        assert.equal(meta.status, 503, meta.text);
        assert.equal((await call(b.url, 'GET', `/event-types/${name}`)).status, 200);
        // Space comes back: publishing resumes by itself (RocksDB recovers from the write error).
        assert.ok(mount(['-o', 'remount,size=128m', mountPoint]), 'remount with more space');
        let resumed = false;
        await eventually(async () => {
            const r = await call(b.url, 'POST', `/event-types/${name}/events`, batch(1000));
            resumed = r.status === 200;
            return resumed;
        }, 30_000, 'publishing to resume');
        const after = await readAll(acked * 100 + 100);
        assert.equal(after.length, acked * 100 + 100);
        assert.deepEqual(after.slice(acked * 100), batch(1000).map((e) => e.id), 'the resumed batch follows the acknowledged ones');
        for (const id of after)
            assert.ok(!refusedIds.has(id), `event ${id} of a refused batch was stored`);
        // And so do metadata writes.
        await eventually(async () => (await call(b.url, 'POST', '/event-types', { name: 'disk.after', owning_application: 'test', category: 'undefined', schema: { type: 'json_schema', schema: '{}' } })).status === 201, 30_000, 'metadata writes to resume');
    }
    finally {
        await closeAllStreams();
        await b.destroy();
    }
});
test.after(() => {
    if (canMount)
        spawnSync('umount', [mountPoint], { stdio: 'ignore' });
    rmSync(mountPoint, { recursive: true, force: true });
});
//# sourceMappingURL=disk-full.http.test.js.map