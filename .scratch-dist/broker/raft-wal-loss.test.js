// Goal: on a real RocksDB, a raft log that lost durable writes to write-ahead-log corruption comes
// back marked damaged (issue 9), while one whose WAL only lost a torn write made after its last raft
// write comes back healthy. Point-in-time recovery (src/log/rocks-kv.ts) silently drops every record
// from the first corrupt one on; the node's marker file (node-disk.ts) knows which raft write was
// durable.
// Method: NodeDisk and RaftLogStore over RocksKv and a FileCell in a temporary directory, one durable
// write per entry; the database is closed, its WAL damaged on disk, and everything opened again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileCell, openRocksKv } from '../log/index.js';
import { tempDir } from '../log/test-support.js';
import { markerFileName, NodeDisk } from './node-disk.js';
import { RaftLogStore } from './raft-log-store.js';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let n = 0;
const newId = () => `disk-${++n}`;
async function open(dir) {
    const kv = await openRocksKv(dir);
    const disk = await NodeDisk.open({ kv, cell: new FileCell(join(dir, markerFileName)), self: 1, newId, logger: quiet });
    const store = await RaftLogStore.open(kv, 0, { disk });
    const close = async () => {
        await disk.close();
        await kv.close();
    };
    return { kv, disk, store, close };
}
/** A founded member with entries 4..40, each in its own durable write; then `after` under another prefix. */
async function fill(dir, after) {
    const { kv, store, close } = await open(dir);
    await store.startEmpty([1, 2, 3], 'unused');
    for (let i = 4; i <= 40; i++) {
        await store.persist({ snapshot: undefined, entries: [{ term: 2, index: i, type: 'normal', data: Buffer.alloc(200, i) }], hardState: { term: 2, vote: 1, commit: i - 1 }, mustSync: true });
    }
    // Not a raft write (a partition's record batch, say): the marker does not follow it.
    if (after !== undefined)
        await kv.write((b) => b.put(Buffer.from([0x10, 1]), after), { durable: true });
    await close();
}
function damageWal(dir, how) {
    const name = readdirSync(dir).filter((f) => f.endsWith('.log')).sort().pop();
    writeFileSync(join(dir, name), how(readFileSync(join(dir, name))));
}
test('durable raft writes lost to a corrupt WAL record: the member comes back damaged and says why', async () => {
    const t = await tempDir('raft-wal-loss');
    try {
        await fill(t.dir);
        damageWal(t.dir, (wal) => {
            wal[Math.floor(wal.length * 0.6)] ^= 0xff;
            return wal;
        });
        const { disk, store, close } = await open(t.dir);
        try {
            assert.match(disk.lostTail ?? '', /RocksDB holds raft writes up to #\d+, but write #\d+ was durable before/);
            assert.ok(store.storage.lastIndex() < 40, `entries were lost: the log ends at ${store.storage.lastIndex()}`);
            assert.match(store.damage?.reason ?? '', /end of its write-ahead log was lost/);
            assert.notEqual(store.coreDamage(), null);
        }
        finally {
            await close();
        }
    }
    finally {
        await t.remove();
    }
});
test('a torn write after the last raft write is no damage: the raft log is whole', async () => {
    const t = await tempDir('raft-wal-torn');
    try {
        await fill(t.dir, Buffer.alloc(4000, 7));
        damageWal(t.dir, (wal) => wal.subarray(0, wal.length - 100));
        const { kv, disk, store, close } = await open(t.dir);
        try {
            assert.equal(await kv.get(Buffer.from([0x10, 1])), null, 'the torn write is gone');
            assert.equal(disk.lostTail, undefined);
            assert.equal(store.damage, undefined);
            assert.equal(store.storage.lastIndex(), 40);
        }
        finally {
            await close();
        }
    }
    finally {
        await t.remove();
    }
});
test('a WAL corrupt from its first record loses the identity too: the directory starts again as a new one that knows it lost raft state', async () => {
    const t = await tempDir('raft-wal-lost-all');
    try {
        await fill(t.dir);
        // The first record of the WAL is the identity's (written when the directory was initialised):
        // point-in-time recovery keeps nothing.
        damageWal(t.dir, (wal) => {
            wal[12] ^= 0xff;
            return wal;
        });
        const { disk, store, close } = await open(t.dir);
        try {
            assert.equal(disk.opening, 'created', 'the identity was lost');
            assert.match(disk.lostTail ?? '', /no identity, but its raft marker says raft write #\d+ was durable/);
            assert.notEqual(disk.identity.lostRaftState, undefined);
            assert.equal(store.isEmpty, true);
        }
        finally {
            await close();
        }
    }
    finally {
        await t.remove();
    }
});
//# sourceMappingURL=raft-wal-loss.test.js.map