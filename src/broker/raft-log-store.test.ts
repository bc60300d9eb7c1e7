// Goal: the raft log store gives back what it persisted, and a member whose stored state is damaged
// comes back marked damaged, with the damage written down (so a restart does not forget it), the bad
// part cut off, and a reason that says what was found: a flipped bit in an entry, in the hard state or
// in the snapshot, a gap in the log, a commit index beyond the log, a lost tail of the write-ahead log
// (against the node's marker), an empty member that did not found its group. The mark goes away in
// the write of the Ready that says `repaired`. Issue 9.
// Method: RaftLogStore over MemoryKv (rawPut corrupts a stored value, copyDurable() keeps an image of
// the disk to roll back to), with a NodeDisk over a MemoryCell where the marker matters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCell, MemoryKv, type OrderedKv } from '../log/index.js';
import { recordOps, type KvOp } from '../log/kv.js';
import type { Entry } from '../raft/index.js';
import { NodeDisk } from './node-disk.js';
import { entryKey, groupKey, kindDamage, kindHardState, kindSnapshot } from './raft-keys.js';
import { RaftGroupCorruptError, RaftLogStore } from './raft-log-store.js';
import { decodeHardStateRecord, encodeDamageRecord } from './raft-records.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let ids = 0;
const newId = () => `disk-${++ids}`;

const entry = (index: number, term: number, text = `e${index}`): Entry => ({ term, index, type: 'normal', data: Buffer.from(text) });

/** A founded 3-voter member with entries 4..n of term 2 persisted durably. */
async function written(kv: MemoryKv, n: number, disk?: NodeDisk): Promise<RaftLogStore> {
  const store = await RaftLogStore.open(kv, 0, { disk });
  await store.startEmpty([1, 2, 3], 'unused');
  const ents: Entry[] = [];
  for (let i = 4; i <= n; i++) ents.push(entry(i, 2));
  await store.persist({ snapshot: undefined, entries: ents, hardState: { term: 2, vote: 3, commit: n - 1 }, mustSync: true });
  return store;
}

function flipBit(kv: MemoryKv, key: Buffer, value: Buffer, at: number): void {
  const bad = Buffer.from(value);
  bad[at]! ^= 0x10;
  kv.rawPut(key, bad);
}

async function raw(kv: MemoryKv, key: Buffer): Promise<Buffer> {
  const v = await kv.get(key);
  assert.ok(v !== null, `a value under ${key.toString('hex')}`);
  return v;
}

test('what was persisted comes back, entries, hard state and snapshot, with no damage', async () => {
  const kv = new MemoryKv();
  const s = await written(kv, 10);
  await s.compact(6, { voters: [1, 2, 3], learners: [] }, Buffer.from('image'), 5);
  const back = await RaftLogStore.open(kv, 0);
  assert.equal(back.damage, undefined);
  assert.equal(back.coreDamage(), null);
  assert.deepEqual(back.storage.hardState(), { term: 2, vote: 3, commit: 9 });
  assert.equal(back.storage.lastIndex(), 10);
  assert.equal(back.storage.snapshot().metadata.index, 6);
  assert.equal(Buffer.from(back.storage.snapshot().data).toString(), 'image');
  assert.deepEqual(back.storage.entries(7, 11, Infinity).map((e) => Buffer.from(e.data).toString()), ['e7', 'e8', 'e9', 'e10']);
});

test('a flipped bit in an entry: the log is cut before it, the member is damaged and stays so across restarts', async () => {
  const kv = new MemoryKv();
  await written(kv, 10);
  const k = entryKey(0, 8);
  flipBit(kv, k, await raw(kv, k), 20);
  const s = await RaftLogStore.open(kv, 0);
  assert.ok(s.damage !== undefined);
  assert.match(s.damage.reason, /corrupt raft record under key .*CRC32C mismatch.*the log is cut before index 8/);
  assert.equal(s.storage.lastIndex(), 7);
  assert.deepEqual(s.storage.hardState(), { term: 2, vote: 3, commit: 7 }, 'the commit index within the kept log, the vote kept');
  assert.deepEqual(s.coreDamage(), { term: 2, index: 10 }, 'it may have acknowledged up to index 10 in term 2');
  assert.equal(await kv.get(entryKey(0, 8)), null, 'the cut part is deleted');
  assert.equal(await kv.get(entryKey(0, 10)), null);
  // The damage is durable: a crash now and a restart still find it (the cut log alone would look healthy).
  const again = await RaftLogStore.open(kv.crash(), 0);
  assert.deepEqual(again.coreDamage(), { term: 2, index: 10 });
  assert.match(again.damage!.reason, /CRC32C mismatch/);
});

test('a corrupt hard state forgets the vote; a corrupt snapshot drops snapshot and log; a gap cuts the log', async () => {
  let kv = new MemoryKv();
  await written(kv, 10);
  const hk = groupKey(0, kindHardState);
  flipBit(kv, hk, await raw(kv, hk), 8);
  let s = await RaftLogStore.open(kv, 0);
  assert.match(s.damage?.reason ?? '', /hard state is corrupt.*its vote is forgotten/);
  assert.deepEqual(s.storage.hardState(), { term: 2, vote: 0, commit: 0 });
  assert.equal(s.storage.lastIndex(), 10, 'the log is kept');

  kv = new MemoryKv();
  const w = await written(kv, 10);
  await w.compact(6, { voters: [1, 2, 3], learners: [] }, Buffer.from('image'), 6);
  const sk = groupKey(0, kindSnapshot);
  flipBit(kv, sk, await raw(kv, sk), 30);
  s = await RaftLogStore.open(kv, 0);
  assert.match(s.damage?.reason ?? '', /snapshot is corrupt.*dropped/);
  assert.equal(s.storage.lastIndex(), 0);
  assert.equal(s.storage.snapshot().metadata.index, 0);
  assert.equal(s.isEmpty, false, 'not a fresh member: it must not found anything');
  assert.equal(await kv.get(sk), null);
  assert.equal(await kv.get(entryKey(0, 9)), null);

  kv = new MemoryKv();
  await written(kv, 10);
  await kv.write((b) => b.del(entryKey(0, 6)), { durable: true });
  s = await RaftLogStore.open(kv, 0);
  assert.match(s.damage?.reason ?? '', /the log has a gap: entry 7 follows 5/);
  assert.equal(s.storage.lastIndex(), 5);
});

test('a member that starts empty without founding its group is damaged until repaired; the repair is durable', async () => {
  const kv = new MemoryKv();
  const s = await RaftLogStore.open(kv, 0);
  assert.equal(s.isEmpty, true);
  await s.startEmpty([], 'joined as a new member');
  assert.deepEqual(s.coreDamage(), { term: 0, index: 0 });
  assert.equal((await RaftLogStore.open(kv.crash(), 0)).damage?.reason, 'joined as a new member', 'the mark is durable');
  const kv2 = kv.crash();
  const s2 = await RaftLogStore.open(kv2, 0);
  // A leader's entries arrive; the Ready that completes the repair removes the mark in the same write.
  await s2.persist({ snapshot: undefined, entries: [entry(1, 3), entry(2, 3)], hardState: { term: 3, vote: 0, commit: 0 }, mustSync: true });
  assert.notEqual((await RaftLogStore.open(kv2.copyDurable(), 0)).damage, undefined, 'entries alone do not repair');
  await s2.persist({ snapshot: undefined, entries: [], hardState: { term: 3, vote: 2, commit: 2 }, mustSync: true, repaired: true });
  assert.equal(s2.damage, undefined);
  const after = await RaftLogStore.open(kv2.crash(), 0);
  assert.equal(after.damage, undefined);
  assert.equal(await kv2.copyDurable().get(groupKey(0, kindDamage)), null);
  assert.equal(after.storage.lastIndex(), 2);
});

test('a lost tail of the write-ahead log: raft writes durable before are gone, the marker says so, the member is damaged', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  const s = await written(kv, 6, disk);
  // RocksDB's disk as it is now; then more durable raft writes, which the marker records.
  const before = kv.copyDurable();
  await s.persist({ snapshot: undefined, entries: [entry(7, 3), entry(8, 3)], hardState: { term: 3, vote: 1, commit: 6 }, mustSync: true });
  await disk.flush();
  // Point-in-time recovery stopped at a corrupt record: the store comes back as it was before.
  const disk2 = await NodeDisk.open({ kv: before, cell, self: 1, newId, logger: quiet });
  assert.match(disk2.lostTail ?? '', /RocksDB holds raft writes up to #\d+, but write #\d+ was durable before/);
  const back = await RaftLogStore.open(before, 0, { disk: disk2 });
  assert.equal(back.storage.lastIndex(), 6, 'the lost entries are gone...');
  assert.deepEqual(back.storage.hardState().term, 2, '...and so are the new term and vote');
  assert.match(back.damage?.reason ?? '', /was durable before: the end of its write-ahead log was lost/);
  assert.deepEqual(back.coreDamage(), { term: 2, index: 6 });
  // The marker moved on after the damage was written: the next start does not see a lost tail, but
  // the member is still damaged (the mark is stored).
  await disk2.flush();
  const disk3 = await NodeDisk.open({ kv: before.copyDurable(), cell, self: 1, newId, logger: quiet });
  assert.equal(disk3.lostTail, undefined);
  assert.notEqual((await RaftLogStore.open(before.copyDurable(), 0, { disk: disk3 })).damage, undefined);
});

/** The hard state in the KV (not the core's view of it). */
async function storedHardState(kv: MemoryKv, group = 0) {
  const k = groupKey(group, kindHardState);
  return decodeHardStateRecord(k, await raw(kv, k));
}

test('a hard state that only moves the commit index is not written; a new term or vote is, durably', async () => {
  const kv = new MemoryKv();
  const s = await written(kv, 6);
  assert.deepEqual(await storedHardState(kv), { term: 2, vote: 3, commit: 5 });
  // Entries with a commit index that moved: the entries are written, the hard state is not.
  await s.persist({ snapshot: undefined, entries: [entry(7, 2)], hardState: { term: 2, vote: 3, commit: 6 }, mustSync: true });
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 2, vote: 3, commit: 7 }, mustSync: false });
  assert.deepEqual(await storedHardState(kv), { term: 2, vote: 3, commit: 5 }, 'the stored commit index lags');
  assert.deepEqual(s.storage.hardState(), { term: 2, vote: 3, commit: 7 }, 'the core sees every commit');
  // A new vote, then a new term: written, and durable (a crash keeps them).
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 2, vote: 1, commit: 7 }, mustSync: true });
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 3, vote: 0, commit: 7 }, mustSync: true });
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 3, vote: 0, commit: 7 }, mustSync: false });
  const after = kv.crash();
  assert.deepEqual(await storedHardState(after), { term: 3, vote: 0, commit: 7 });
  const back = await RaftLogStore.open(after, 0);
  assert.deepEqual(back.storage.hardState(), { term: 3, vote: 0, commit: 7 });
  assert.equal(back.storage.lastIndex(), 7);
});

test('a store that keeps its commit index (the metadata group\'s) writes one that only moves it: a restart takes the configuration of the last commit it knew', async () => {
  const kv = new MemoryKv();
  await written(kv, 6);
  const s = await RaftLogStore.open(kv, 0, { keepsCommit: true });
  await s.persist({ snapshot: undefined, entries: [entry(7, 2)], hardState: { term: 2, vote: 3, commit: 6 }, mustSync: true });
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 2, vote: 3, commit: 7 }, mustSync: false });
  assert.deepEqual(await storedHardState(kv), { term: 2, vote: 3, commit: 7 });
  // A later durable write makes it durable (the KV applies writes in call order).
  await s.persist({ snapshot: undefined, entries: [entry(8, 2)], hardState: undefined, mustSync: true });
  const back = await RaftLogStore.open(kv.crash(), 0, { keepsCommit: true });
  assert.equal(back.storage.hardState().commit, 7);
});

test('the term a damaged member starts at (raised from its mark, not written at open) is written with its next hard state, even one that only moves the commit index', async () => {
  const kv = new MemoryKv();
  await written(kv, 6);
  const dk = groupKey(0, kindDamage);
  kv.rawPut(dk, encodeDamageRecord(dk, { term: 5, index: 6, reason: 'a lost tail' }));
  const s = await RaftLogStore.open(kv, 0);
  assert.equal(s.storage.hardState().term, 5, 'the core starts at the damage term');
  assert.equal((await storedHardState(kv)).term, 2);
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 5, vote: 0, commit: 6 }, mustSync: false });
  assert.deepEqual(await storedHardState(kv), { term: 5, vote: 0, commit: 6 });
  // Written once: the next commit-only one is not.
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 5, vote: 0, commit: 6 }, mustSync: false });
  await s.persist({ snapshot: undefined, entries: [entry(7, 5)], hardState: { term: 5, vote: 0, commit: 7 }, mustSync: true });
  assert.deepEqual(await storedHardState(kv), { term: 5, vote: 0, commit: 6 });
});

test('no false alarm: a crash that loses only writes that were never durable leaves the member healthy', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  const s = await written(kv, 6, disk);
  // A commit-only hard state is written without an fsync, and so is a compaction.
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 2, vote: 3, commit: 6 }, mustSync: false });
  await s.compact(5, { voters: [1, 2, 3], learners: [] }, Buffer.from('img'), 5);
  await disk.flush();
  const after = kv.crash();
  const disk2 = await NodeDisk.open({ kv: after, cell, self: 1, newId, logger: quiet });
  assert.equal(disk2.lostTail, undefined);
  const back = await RaftLogStore.open(after, 0, { disk: disk2 });
  assert.equal(back.damage, undefined);
  assert.equal(back.storage.lastIndex(), 6);
});

test('damage the core finds while running (Ready.damaged) is recorded in the same write and survives a restart', async () => {
  const kv = new MemoryKv();
  const s = await written(kv, 6);
  await s.persist({ snapshot: undefined, entries: [], hardState: { term: 3, vote: 0, commit: 6 }, mustSync: true, damaged: { term: 3, index: 9 } });
  assert.deepEqual(s.coreDamage(), { term: 3, index: 9 });
  const back = await RaftLogStore.open(kv.crash(), 0);
  assert.deepEqual(back.coreDamage(), { term: 3, index: 9 });
  assert.match(back.damage?.reason ?? '', /a leader counts entries this member does not hold/);
});

test('a group whose log is its data (a partition) with a corrupt record is not opened, and not cut', async () => {
  const kv = new MemoryKv();
  const s = await RaftLogStore.open(kv, 5, { keepCompacted: true });
  await s.startEmpty([1], 'unused');
  await s.persist({ snapshot: undefined, entries: [entry(2, 2), entry(3, 2), entry(4, 2)], hardState: { term: 2, vote: 1, commit: 4 }, mustSync: true });
  const k = entryKey(5, 3);
  flipBit(kv, k, await raw(kv, k), 20);
  await assert.rejects(RaftLogStore.open(kv, 5, { keepCompacted: true }), (err: unknown) => {
    assert.ok(err instanceof RaftGroupCorruptError);
    assert.match(err.message, /raft group 5 is corrupt and stays closed: .*CRC32C mismatch/);
    return true;
  });
  assert.notEqual(await kv.get(entryKey(5, 4)), null, 'nothing was deleted');
  assert.equal(await kv.get(groupKey(5, kindDamage)), null, 'nor marked');
});

/** Records the kinds of the operations of every write (the KV itself is a MemoryKv). */
function recording(kv: MemoryKv): { kv: OrderedKv; ops: KvOp['kind'][][] } {
  const ops: KvOp['kind'][][] = [];
  return {
    ops,
    kv: {
      write: (fill, o) => {
        const recorded = recordOps(fill);
        ops.push(recorded.map((op) => op.kind));
        return kv.write((b) => {
          for (const op of recorded) {
            if (op.kind === 'put') b.put(op.key, op.value);
            else if (op.kind === 'del') b.del(op.key);
            else b.delRange(op.start, op.end);
          }
        }, o);
      },
      get: (k) => kv.get(k),
      iterate: (r) => kv.iterate(r),
      sizeBytes: () => kv.sizeBytes(),
      close: () => kv.close(),
    },
  };
}

async function storedIndexes(kv: MemoryKv, group: number): Promise<number[]> {
  const out: number[] = [];
  for await (const [k] of kv.iterate({ gte: entryKey(group, 0), lt: entryKey(group, Number.MAX_SAFE_INTEGER) })) out.push(k.readUInt32BE(10));
  return out;
}

// Every append used to carry a range deletion "from its first index to the end of the log": RocksDB
// keeps such tombstones in the memtable until it is flushed, and tens of thousands of them (one per
// group per turn) made reads and the flush itself take seconds and gigabytes (docs/benchmarks.md).
test('appending after the last stored entry writes no deletion at all; an overwrite deletes exactly the stale suffix', async () => {
  const mem = new MemoryKv();
  const { kv, ops } = recording(mem);
  const s = await RaftLogStore.open(kv, 7, { keepCompacted: true });
  await s.startEmpty([1], 'unused');
  for (let i = 2; i <= 40; i += 2) {
    await s.persist({ snapshot: undefined, entries: [entry(i, 2), entry(i + 1, 2)], hardState: { term: 2, vote: 1, commit: i }, mustSync: true });
  }
  for (const w of ops) assert.deepEqual(w.filter((k) => k !== 'put'), [], 'appends only put');
  assert.deepEqual(await storedIndexes(mem, 7), Array.from({ length: 41 }, (_, i) => i + 1));
  // A new leader's shorter log replaces 30..41 with 30..31: 32..41 are deleted one by one.
  ops.length = 0;
  await s.persist({ snapshot: undefined, entries: [entry(30, 3), entry(31, 3)], hardState: { term: 3, vote: 1, commit: 29 }, mustSync: true });
  assert.deepEqual(ops[0]!.filter((k) => k === 'del').length, 10);
  assert.deepEqual(ops[0]!.filter((k) => k === 'delRange').length, 0);
  const back = await RaftLogStore.open(mem, 7, { keepCompacted: true });
  assert.equal(back.storage.lastIndex(), 31);
  assert.equal(back.storage.term(31), 3);
  assert.deepEqual(await storedIndexes(mem, 7), Array.from({ length: 31 }, (_, i) => i + 1));
});

test('a long stale suffix goes in one bounded range deletion; entries stored by log shipping beyond the log are removed too', async () => {
  const mem = new MemoryKv();
  const s = await RaftLogStore.open(mem, 8, { keepCompacted: true });
  await s.startEmpty([1], 'unused');
  const many: Entry[] = [];
  for (let i = 2; i <= 1500; i++) many.push(entry(i, 2));
  await s.persist({ snapshot: undefined, entries: many, hardState: { term: 2, vote: 1, commit: 1 }, mustSync: true });
  await s.persist({ snapshot: undefined, entries: [entry(5, 3)], hardState: { term: 3, vote: 1, commit: 1 }, mustSync: true });
  assert.deepEqual(await storedIndexes(mem, 8), [1, 2, 3, 4, 5]);
  // Log shipping stores committed entries beyond the mirror's log (6..9); a later append of 6 alone
  // must not leave 7..9 behind.
  await mem.write((b) => s.fillFetched(b, [entry(6, 3), entry(7, 3), entry(8, 3), entry(9, 3)]), { durable: true });
  assert.deepEqual(await storedIndexes(mem, 8), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  await s.persist({ snapshot: undefined, entries: [entry(6, 4)], hardState: { term: 4, vote: 1, commit: 1 }, mustSync: true });
  assert.deepEqual(await storedIndexes(mem, 8), [1, 2, 3, 4, 5, 6]);
  const back = await RaftLogStore.open(mem, 8, { keepCompacted: true });
  assert.equal(back.storage.lastIndex(), 6);
  assert.equal(back.storage.term(6), 4);
});

test('a partition log with a corrupt entry: committed (applied) entries are named for repair; past the applied index the log is cut and the member marked damaged', async () => {
  const make = async () => {
    const kv = new MemoryKv();
    const s = await RaftLogStore.open(kv, 5, { keepCompacted: true });
    await s.startEmpty([1], 'unused');
    await s.persist({ snapshot: undefined, entries: [entry(2, 2), entry(3, 2), entry(4, 2)], hardState: { term: 2, vote: 1, commit: 4 }, mustSync: true });
    const k = entryKey(5, 3);
    flipBit(kv, k, await raw(kv, k), 20);
    return kv;
  };
  const applied3 = await make();
  await assert.rejects(RaftLogStore.open(applied3, 5, { keepCompacted: true, applied: 3 }), (err: unknown) => {
    assert.ok(err instanceof RaftGroupCorruptError);
    assert.deepEqual(err.committed, { from: 3, to: 3 });
    return true;
  });
  assert.notEqual(await applied3.get(entryKey(5, 4)), null, 'nothing was deleted');
  const applied2 = await make();
  const s = await RaftLogStore.open(applied2, 5, { keepCompacted: true, applied: 2 });
  assert.equal(s.storage.lastIndex(), 2, 'cut before the corrupt entry');
  assert.match(s.damage?.reason ?? '', /CRC32C mismatch/);
  assert.equal(await applied2.get(entryKey(5, 4)), null, 'the entries after it are removed: the leader sends them again');
  assert.notEqual(await applied2.get(groupKey(5, kindDamage)), null, 'marked damaged durably');
});
