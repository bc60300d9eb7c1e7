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
import { FileCell, openRocksKv, type RocksKv } from '../log/index.js';
import { tempDir } from '../log/test-support.js';
import { markerFileName, NodeDisk, systemMarkerPacing } from './node-disk.js';
import { writeSeqKey } from './raft-keys.js';
import { decodeU64Record } from './raft-records.js';
import { RaftLogStore } from './raft-log-store.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let n = 0;
const newId = () => `disk-${++n}`;

async function open(dir: string): Promise<{ kv: RocksKv; disk: NodeDisk; store: RaftLogStore; close: () => Promise<void> }> {
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
async function fill(dir: string, after?: Buffer): Promise<void> {
  const { kv, store, close } = await open(dir);
  await store.startEmpty([1, 2, 3], 'unused');
  for (let i = 4; i <= 40; i++) {
    await store.persist({ snapshot: undefined, entries: [{ term: 2, index: i, type: 'normal', data: Buffer.alloc(200, i) }], hardState: { term: 2, vote: 1, commit: i - 1 }, mustSync: true });
  }
  // Not a raft write (a partition's record batch, say): the marker does not follow it.
  if (after !== undefined) await kv.write((b) => b.put(Buffer.from([0x10, 1]), after), { durable: true });
  await close();
}

function damageWal(dir: string, how: (wal: Buffer) => Buffer): void {
  const name = readdirSync(dir).filter((f) => f.endsWith('.log')).sort().pop()!;
  writeFileSync(join(dir, name), how(readFileSync(join(dir, name))));
}

test('durable raft writes lost to a corrupt WAL record: the member comes back damaged and says why', async () => {
  const t = await tempDir('raft-wal-loss');
  try {
    await fill(t.dir);
    damageWal(t.dir, (wal) => {
      wal[Math.floor(wal.length * 0.6)]! ^= 0xff;
      return wal;
    });
    const { disk, store, close } = await open(t.dir);
    try {
      assert.match(disk.lostTail ?? '', /RocksDB holds raft writes up to #\d+, but write #\d+ was durable before/);
      assert.ok(store.storage.lastIndex() < 40, `entries were lost: the log ends at ${store.storage.lastIndex()}`);
      assert.match(store.damage?.reason ?? '', /end of its write-ahead log was lost/);
      assert.notEqual(store.coreDamage(), null);
    } finally {
      await close();
    }
  } finally {
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
    } finally {
      await close();
    }
  } finally {
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
      wal[12]! ^= 0xff;
      return wal;
    });
    const { disk, store, close } = await open(t.dir);
    try {
      assert.equal(disk.opening, 'created', 'the identity was lost');
      assert.match(disk.lostTail ?? '', /no identity, but its raft marker says raft write #\d+ was durable/);
      assert.notEqual(disk.identity.lostRaftState, undefined);
      assert.equal(store.isEmpty, true);
    } finally {
      await close();
    }
  } finally {
    await t.remove();
  }
});

test('a crash, not a close: the marker written on its own after the durable writes (paced as in production) finds the tail lost to a corrupt WAL record', { timeout: 60_000 }, async () => {
  // The tests above close the node, and a close flushes the marker: they would pass with a marker that
  // only moves at close. A crash flushes nothing; what finds the loss then is the marker write that
  // follows the durable writes by itself.
  const t = await tempDir('raft-wal-loss-crash');
  try {
    const kv = await openRocksKv(t.dir);
    const cell = new FileCell(join(t.dir, markerFileName));
    const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet, pacing: systemMarkerPacing() });
    const store = await RaftLogStore.open(kv, 0, { disk });
    await store.startEmpty([1, 2, 3], 'unused');
    for (let i = 4; i <= 40; i++) {
      await store.persist({ snapshot: undefined, entries: [{ term: 2, index: i, type: 'normal', data: Buffer.alloc(200, i) }], hardState: { term: 2, vote: 1, commit: i - 1 }, mustSync: true });
    }
    const last = decodeU64Record('writeSeq', writeSeqKey, (await kv.get(writeSeqKey))!);
    // The marker names the last durable write within an interval and two marker writes; wait for it
    // (a deadline, not a sleep: a loaded machine may take longer than the interval).
    const reader = new FileCell(join(t.dir, markerFileName));
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await reader.read();
      if (r.state === 'ok' && r.payload.readUInt32BE(0) * 0x1_0000_0000 + r.payload.readUInt32BE(4) >= last) break;
      assert.ok(Date.now() < deadline, `the marker did not name raft write #${last} within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // The crash: the database and the marker's file closed as a dying process leaves them, the disk not
    // flushed or closed.
    await cell.close();
    await kv.close();
    damageWal(t.dir, (wal) => {
      wal[Math.floor(wal.length * 0.6)]! ^= 0xff;
      return wal;
    });
    const again = await open(t.dir);
    try {
      assert.match(again.disk.lostTail ?? '', /RocksDB holds raft writes up to #\d+, but write #\d+ was durable before/);
      assert.ok(again.store.storage.lastIndex() < 40, `entries were lost: the log ends at ${again.store.storage.lastIndex()}`);
      assert.notEqual(again.store.coreDamage(), null);
    } finally {
      await again.close();
    }
  } finally {
    await t.remove();
  }
});
