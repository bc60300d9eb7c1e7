// Goal: the write-ahead-log recovery mode RocksKv opens RocksDB with is point-in-time, deliberately
// (docs/storage.md, "WAL recovery"): a torn last record (a crash in the middle of a write) and a
// corrupt record in the middle both leave a database that opens, holding exactly the writes before
// the damage. The second case silently drops writes that were durable: that is what the raft marker
// (src/broker/node-disk.ts) exists to notice. This also checks the binding's mode constants against
// RocksDB's behaviour.
// Method: durable writes into a real RocksDB in a temporary directory, closed; the WAL file is then
// truncated or has one byte flipped, and the database is opened again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import RocksDB from 'rocksdb-native';
import { openRocksKv } from './rocks-kv.js';
import { tempDir } from './test-support.js';
const key = (i) => Buffer.from(`k${String(i).padStart(3, '0')}`);
async function writeAndClose(dir, n) {
    const kv = await openRocksKv(dir);
    for (let i = 0; i < n; i++)
        await kv.write((b) => b.put(key(i), Buffer.alloc(1000, i)), { durable: true });
    await kv.close();
}
function damageWal(dir, how) {
    const name = readdirSync(dir).filter((f) => f.endsWith('.log')).sort().pop();
    assert.ok(name !== undefined, 'a WAL file');
    const path = join(dir, name);
    writeFileSync(path, how(readFileSync(path)));
}
async function keysAfterReopen(dir) {
    const kv = await openRocksKv(dir);
    const out = [];
    for await (const [k] of kv.iterate({}))
        out.push(Number(k.toString().slice(1)));
    await kv.close();
    return out;
}
test('a torn last record: RocksDB opens with every write before it', async () => {
    const t = await tempDir('wal-torn');
    try {
        await writeAndClose(t.dir, 20);
        damageWal(t.dir, (wal) => wal.subarray(0, wal.length - 500));
        assert.deepEqual(await keysAfterReopen(t.dir), Array.from({ length: 19 }, (_, i) => i));
    }
    finally {
        await t.remove();
    }
});
test('a corrupt record in the middle: RocksDB opens and silently drops it and every later write', async () => {
    const t = await tempDir('wal-corrupt');
    try {
        await writeAndClose(t.dir, 20);
        damageWal(t.dir, (wal) => {
            wal[Math.floor(wal.length / 2)] ^= 0xff;
            return wal;
        });
        const kept = await keysAfterReopen(t.dir);
        assert.ok(kept.length > 0 && kept.length < 20, `a prefix is kept: ${kept.length} of 20`);
        assert.deepEqual(kept, Array.from({ length: kept.length }, (_, i) => i), 'a prefix, no hole');
    }
    finally {
        await t.remove();
    }
});
test('the binding\'s modes are RocksDB\'s: absolute consistency refuses that database, point-in-time opens it', async () => {
    const t = await tempDir('wal-modes');
    try {
        await writeAndClose(t.dir, 20);
        damageWal(t.dir, (wal) => wal.subarray(0, wal.length - 500));
        const strict = new RocksDB(t.dir, { walRecoveryMode: RocksDB.constants.walRecoveryMode.ABSOLUTE_CONSISTENCY });
        await assert.rejects(strict.ready(), /truncated record/);
        await strict.close({ force: true }).catch(() => undefined);
        const pit = new RocksDB(t.dir, { walRecoveryMode: RocksDB.constants.walRecoveryMode.POINT_IN_TIME });
        await pit.ready();
        await pit.close({ force: true });
    }
    finally {
        await t.remove();
    }
});
//# sourceMappingURL=rocks-kv-recovery.test.js.map