// Goal: a data directory knows its identity (node id, disk id, cluster) and whether RocksDB lost raft
// writes that were durable once: a fresh directory is initialised (marker first), a directory of
// another node is refused with a message saying what to do, a missing or foreign marker makes every
// group damaged, the marker follows durable writes one write at a time, and a directory from before
// record checksums is rewritten in the checksummed format. Issue 9.
// Method: NodeDisk over MemoryKv and MemoryCell; old-format records made by the protobuf encoder that
// wrote them (src/transport/codec.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCell, MemoryKv } from '../log/index.js';
import { bootstrapState, encodeConfChange } from '../raft/index.js';
import { encodeEntry, encodeHardState, encodeSnapshot } from '../transport/index.js';
import { incarnationOfMember, memberIncarnationMax, nodeOfMember } from '../core/member-id.js';
import { diskTokenOf, isFoundingDisk, legacyClusterId, metadataIncarnationOf, NodeDisk, NodeDiskError } from './node-disk.js';
import { entryKey, groupKey, kindHardState, kindSnapshot, nodeIdentityKey } from './raft-keys.js';
import { RaftLogStore } from './raft-log-store.js';
import { decodeEntryRecord } from './raft-records.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let n = 0;
const newId = () => `disk-${++n}`;

async function founded(kv: MemoryKv, disk: NodeDisk): Promise<void> {
  const s = await RaftLogStore.open(kv, 0, { disk });
  await s.startEmpty([1, 2, 3], 'unused');
}

test('a fresh directory gets an identity and a marker; reopening finds both and nothing lost', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 2, newId, logger: quiet });
  assert.equal(disk.opening, 'created');
  assert.equal(disk.identity.nodeId, 2);
  assert.equal(disk.identity.clusterId, '');
  assert.equal(cell.writes, 1, 'the marker is written at initialisation');
  await founded(kv, disk);
  await disk.setCluster('c1', [{ id: 1, diskId: 'd1' }, { id: 2, diskId: disk.identity.diskId }]);
  await disk.close();
  const again = await NodeDisk.open({ kv: kv.crash(), cell, self: 2, newId, logger: quiet });
  assert.equal(again.opening, 'opened');
  assert.equal(again.lostTail, undefined);
  assert.equal(again.identity.diskId, disk.identity.diskId);
  assert.equal(again.identity.clusterId, 'c1');
  assert.equal(again.identity.founders.length, 2);
});

test('a crash between the marker and the identity leaves a directory that is initialised again', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  await cell.write(Buffer.from('stale marker of an initialisation that did not finish'));
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  assert.equal(disk.opening, 'created');
  assert.equal(disk.lostTail, undefined);
});

test('the directory of another node is refused, naming both nodes', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  await assert.rejects(NodeDisk.open({ kv, cell, self: 3, newId, logger: quiet }), (err: unknown) => {
    assert.ok(err instanceof NodeDiskError);
    assert.match(err.message, /belongs to node 1, not to node 3/);
    return true;
  });
});

test('a missing, foreign or corrupt marker marks every raft group damaged', async () => {
  for (const spoil of ['missing', 'foreign', 'corrupt'] as const) {
    const kv = new MemoryKv();
    const cell = new MemoryCell();
    const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
    await founded(kv, disk);
    // A second group, to see that every group is marked.
    await (await RaftLogStore.open(kv, 7, { disk })).startEmpty([1], 'unused');
    await disk.close();
    let next = cell;
    if (spoil === 'missing') next = new MemoryCell();
    if (spoil === 'foreign') {
      next = new MemoryCell();
      await next.write(Buffer.concat([Buffer.alloc(8), Buffer.from('another-disk')]));
    }
    if (spoil === 'corrupt') cell.image = Buffer.alloc(1024, 1);
    const again = await NodeDisk.open({ kv, cell: next, self: 1, newId, logger: quiet });
    assert.match(again.lostTail ?? '', { missing: /marker file is missing/, foreign: /belongs to another data directory/, corrupt: /marker file is corrupt/ }[spoil]);
    for (const g of [0, 7]) assert.notEqual((await RaftLogStore.open(kv, g, { disk: again })).damage, undefined, `${spoil}: group ${g}`);
  }
});

test('the marker follows durable raft writes with one write in flight, coalescing the rest', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  const before = cell.writes;
  for (let seq = 1; seq <= 50; seq++) disk.durable(seq);
  await disk.flush();
  assert.ok(cell.writes - before <= 2, `${cell.writes - before} marker writes for 50 durable raft writes`);
  const r = await cell.read();
  assert.equal(r.state === 'ok' && r.payload.readUInt32BE(4), 50, 'the marker holds the latest');
});

/** Pacing on a hand-moved clock: timers fire when the test moves time past them. */
function manualPacing(intervalMs: number) {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    pacing: { intervalMs, monotonicMs: () => now, after: (ms: number, fn: () => void) => void timers.push({ at: now + ms, fn }) },
    pending: () => timers.length,
    async advance(ms: number): Promise<void> {
      now += ms;
      for (const t of timers.splice(0).sort((a, b) => a.at - b.at)) {
        if (t.at <= now) t.fn();
        else timers.push(t);
      }
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
  };
}
const markedSeq = async (cell: MemoryCell): Promise<number> => {
  const r = await cell.read();
  return r.state === 'ok' ? r.payload.readUInt32BE(4) : -1;
};
const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

test('a paced marker: one write per interval however many durable writes, the latest named by the end of the interval; raises of the term ceiling and flushes are not paced', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const clock = manualPacing(10);
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet, pacing: clock.pacing });
  const before = cell.writes;
  // The first durable write after a quiet spell is marked at once.
  disk.durable(1);
  await settle();
  assert.equal(cell.writes - before, 1);
  assert.equal(await markedSeq(cell), 1);
  // Durable writes every millisecond for 30 ms: one marker write per 10 ms, each naming the latest.
  for (let seq = 2; seq <= 31; seq++) {
    disk.durable(seq);
    await clock.advance(1);
  }
  assert.ok(cell.writes - before <= 4, `${cell.writes - before} marker writes for 31 durable writes in 30 ms`);
  assert.ok(await markedSeq(cell) >= 21, `the marker lags by at most an interval: it names ${await markedSeq(cell)} of 31`);
  // Nothing more comes: the interval's end writes the latest without another durable write.
  await clock.advance(10);
  assert.equal(await markedSeq(cell), 31);
  assert.equal(clock.pending(), 0);
  // A raise of the term ceiling within the interval is written at once, with the latest durable write.
  await clock.advance(10);
  disk.durable(32);
  await settle();
  disk.durable(33);
  await settle();
  assert.equal(await markedSeq(cell), 32, 'paced: 33 waits for the interval');
  const raised = disk.raiseTermCeiling(5);
  assert.notEqual(raised, undefined);
  await raised;
  assert.equal(disk.termCeiling, 5);
  assert.equal(await markedSeq(cell), 33, 'the raise carried the latest durable write');
  // A flush does not wait for the interval either.
  disk.durable(34);
  await settle();
  await disk.flush();
  assert.equal(await markedSeq(cell), 34);
  const again = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet, pacing: manualPacing(10).pacing });
  assert.equal(again.termCeiling, 5);
});

test('a directory from before record checksums is rewritten in the checksummed format, in one write with its identity', async () => {
  const kv = new MemoryKv();
  const { entries, hardState } = bootstrapState([1, 2, 3]);
  const ents = [...entries, { term: 2, index: 4, type: 'normal' as const, data: Buffer.from('{"op":"x"}') }];
  await kv.write((b) => {
    for (const e of ents) b.put(entryKey(0, e.index), encodeEntry(e));
    b.put(groupKey(0, kindHardState), encodeHardState({ ...hardState, term: 2, vote: 1 }));
    b.put(groupKey(0, kindSnapshot), encodeSnapshot({ metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } }, data: new Uint8Array() }));
  }, { durable: true });
  const disk = await NodeDisk.open({ kv, cell: new MemoryCell(), self: 1, newId, logger: quiet });
  assert.equal(disk.opening, 'migrated');
  assert.equal(disk.identity.clusterId, legacyClusterId);
  const k4 = entryKey(0, 4);
  assert.equal(Buffer.from(decodeEntryRecord(k4, (await kv.get(k4))!).data).toString(), '{"op":"x"}', 'stored in the new format');
  const s = await RaftLogStore.open(kv, 0, { disk });
  assert.equal(s.damage, undefined);
  assert.deepEqual(s.storage.hardState(), { term: 2, vote: 1, commit: 3 });
  assert.equal(s.storage.lastIndex(), 4);
  assert.equal(s.storage.entries(1, 2, Infinity)[0]!.type, 'confChange');
  assert.notEqual(await kv.get(nodeIdentityKey), null);
});

test('an old-format record that does not parse is dropped while rewriting, and its group comes back damaged', async () => {
  const kv = new MemoryKv();
  const good = (i: number) => encodeEntry({ term: 1, index: i, type: 'confChange', data: encodeConfChange({ type: 'addVoter', nodeId: i }) });
  await kv.write((b) => {
    b.put(entryKey(0, 1), good(1));
    b.put(entryKey(0, 2), Buffer.from([0xff, 0xff, 0xff]));
    b.put(entryKey(0, 3), good(3));
    b.put(groupKey(0, kindHardState), encodeHardState({ term: 1, vote: 0, commit: 1 }));
  }, { durable: true });
  const disk = await NodeDisk.open({ kv, cell: new MemoryCell(), self: 1, newId, logger: quiet });
  const s = await RaftLogStore.open(kv, 0, { disk });
  assert.match(s.damage?.reason ?? '', /pre-checksum format did not decode/);
  assert.match(s.damage?.reason ?? '', /the log has a gap/);
  assert.equal(s.storage.lastIndex(), 1);
});

test('a marker that names a durable raft write beside a KV without identity: initialised again, knowing it lost raft state, also after a crash before the identity', async () => {
  const cell = new MemoryCell();
  const first = new MemoryKv();
  const disk = await NodeDisk.open({ kv: first, cell, self: 1, newId, logger: quiet });
  await founded(first, disk);
  await disk.flush();
  // RocksDB lost its write-ahead log from the start: the KV is empty, the marker names write #1 or later.
  const r = await cell.read();
  const markedSeq = r.state === 'ok' ? r.payload.readUInt32BE(4) : 0;
  assert.ok(markedSeq > 0);
  // A crash right after the new marker is written, before the identity: the next start still knows.
  const failing = new MemoryKv();
  failing.write = () => Promise.reject(new Error('power lost'));
  await assert.rejects(NodeDisk.open({ kv: failing, cell, self: 1, newId, logger: quiet }), /power lost/);
  const kv = new MemoryKv();
  const again = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  assert.equal(again.opening, 'created');
  assert.match(again.lostTail ?? '', /no identity, but its raft marker says raft write #\d+ was durable/);
  assert.match(again.identity.lostRaftState ?? '', /no identity/);
  assert.notEqual(again.identity.diskId, disk.identity.diskId, 'a new disk id: it joins as a new member');
  // Numbering goes on above the lost writes, so later starts do not take the new writes for a loss.
  await founded(kv, again);
  await again.flush();
  const later = await NodeDisk.open({ kv: kv.crash(), cell, self: 1, newId, logger: quiet });
  assert.equal(later.lostTail, undefined);
  assert.match(later.identity.lostRaftState ?? '', /no identity/, 'the record stays');
});

test('a lost tail is recorded in the identity too (for groups that lost every record)', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  await disk.setCluster('c1', []);
  const before = kv.copyDurable();
  await founded(kv, disk);
  await disk.flush();
  const again = await NodeDisk.open({ kv: before, cell, self: 1, newId, logger: quiet });
  assert.match(again.identity.lostRaftState ?? '', /was durable before/);
  assert.equal(again.identity.clusterId, 'c1');
  const reopened = await NodeDisk.open({ kv: before.crash(), cell, self: 1, newId, logger: quiet });
  assert.equal(reopened.lostTail, undefined);
  assert.match(reopened.identity.lostRaftState ?? '', /was durable before/);
});

test('the registration token and the founding-disk rule: a founder never registers; a joined directory, and one that lost raft writes (each loss anew), do', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  await disk.setCluster('c1', [{ id: 1, diskId: disk.identity.diskId }, { id: 2, diskId: 'other' }]);
  assert.equal(isFoundingDisk(disk.identity), true);
  assert.equal(diskTokenOf(disk.identity), disk.identity.diskId);
  const joined = await NodeDisk.open({ kv: new MemoryKv(), cell: new MemoryCell(), self: 3, newId, logger: quiet });
  await joined.setCluster('c1', []);
  assert.equal(isFoundingDisk(joined.identity), false, 'a directory that joined registers');
  // The founder loses a durable tail twice: it is no founding disk any more, and each loss is a new token.
  const tokens = new Set([diskTokenOf(disk.identity)]);
  let current = kv;
  for (let loss = 1; loss <= 2; loss++) {
    const opened = await NodeDisk.open({ kv: current, cell, self: 1, newId, logger: quiet });
    const before = current.copyDurable();
    await founded(current, opened);
    await opened.flush();
    const lost = await NodeDisk.open({ kv: before, cell, self: 1, newId, logger: quiet });
    assert.equal(lost.identity.losses, loss);
    assert.equal(isFoundingDisk(lost.identity), false);
    tokens.add(diskTokenOf(lost.identity));
    await lost.close();
    current = before;
  }
  assert.equal(tokens.size, 3, 'each loss gives a new token');
});

test('raft writes read back at open but not yet durable (a kill -9 leaves them in the page cache) are not marked durable: a power loss after a marker write finds no lost tail', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  const s = await RaftLogStore.open(kv, 5, { disk });
  await s.startEmpty([1], 'unused');
  await disk.flush();
  // A raft write that is not durable yet when the process is killed: the next process reads it.
  await kv.write((b) => void disk.stamp(b), { durable: false });
  await disk.close();
  const again = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  assert.equal(again.lostTail, undefined);
  // The next process raises the term ceiling (an election) before any durable write of its own...
  await again.raiseTermCeiling(7);
  await again.flush();
  // ...and the power goes: the write the page cache held is gone. The marker never claimed it.
  const third = await NodeDisk.open({ kv: kv.crash(), cell, self: 1, newId, logger: quiet });
  assert.equal(third.lostTail, undefined, 'a write that was never durable is not a lost tail');
  assert.equal(third.termCeiling, 7);
});

test('a directory that joins as a new metadata member records its member id; it keeps it across restarts until a loss', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 3, newId: () => 'disk-after-wipe', logger: quiet });
  assert.equal(disk.metadataMember, 3, 'the node id until it joins as a new member');
  const m = await disk.newMetadataMember();
  assert.equal(nodeOfMember(m), 3);
  assert.ok(incarnationOfMember(m) >= 1 && incarnationOfMember(m) <= memberIncarnationMax);
  assert.equal(await disk.newMetadataMember(), m, 'drawn once');
  await disk.close();
  const again = await NodeDisk.open({ kv, cell, self: 3, newId: () => 'unused', logger: quiet });
  assert.equal(again.metadataMember, m, 'recorded in the identity');
  assert.equal(await again.newMetadataMember(), m, 'a restart before anything was written keeps it');
  // Another directory draws another incarnation (in all but about one case in four million).
  assert.notEqual(metadataIncarnationOf('another-disk', 0), incarnationOfMember(m));
  // The same directory after a loss draws another one.
  assert.notEqual(metadataIncarnationOf('disk-after-wipe', 1), incarnationOfMember(m));
});
