/**
 * Goal: a member whose lost write-ahead-log tail took its newest term with it cannot acknowledge a
 * deposed leader of a term it had already left. The node's marker holds a term ceiling that the host
 * makes durable before any message carries a higher term (node-disk.ts, termCeiling); a damaged member
 * starts at that ceiling with no vote (raft-log-store.ts). Found by the host simulation (seed 1014 of
 * SEEDS=2000: CommittedPrefix, "node 2 has term 9 at its commit 93, committed term 10"): node 1 led
 * term 10 and lost the tail holding it; back at term 9 it took the appends of node 2, deposed leader
 * of term 9, whose entry then counted as committed over the one term 10 had committed.
 * Method: NodeDisk, RaftLogStore and RaftNodeHost over MemoryKv (copyDurable keeps only what was
 * durable before a point: the lost tail) and MemoryCell.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryCell, MemoryKv } from '../log/index.js';
import { makeMessage, type Message } from '../raft/index.js';
import { NodeDisk } from './node-disk.js';
import { RaftLogStore } from './raft-log-store.js';
import { RaftNodeHost } from './raft-host/node-host.js';
import { RaftGroup } from './raft-host/raft-group.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let n = 0;
const newId = () => `disk-${++n}`;

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
}

test('a lost tail that held the newest term: the damaged member starts at the term ceiling with no vote, and refuses the deposed leader of the older term', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  await disk.setCluster('c', [{ id: 1, diskId: disk.identity.diskId }]);
  const store = await RaftLogStore.open(kv, 7, { disk });
  await store.bootstrap([1, 2, 3]);
  await store.persist({ snapshot: undefined, entries: [{ term: 9, index: 4, type: 'normal', data: Buffer.from('a') }], hardState: { term: 9, vote: 2, commit: 3 }, mustSync: true });
  await disk.flush();
  const beforeLoss = kv.copyDurable();
  // Term 10: this node votes (and, say, leads), as the host does it: the ceiling first, then the write.
  await disk.raiseTermCeiling(10);
  await store.persist({ snapshot: undefined, entries: [], hardState: { term: 10, vote: 1, commit: 3 }, mustSync: true });
  await disk.flush();
  assert.equal(disk.termCeiling, 10);

  // The write-ahead log loses everything after beforeLoss.
  const lost = await NodeDisk.open({ kv: beforeLoss, cell, self: 1, newId, logger: quiet });
  assert.match(lost.lostTail ?? '', /was durable before/);
  const reopened = await RaftLogStore.open(beforeLoss, 7, { disk: lost });
  assert.ok(reopened.damage !== undefined, 'damaged');
  assert.equal(reopened.damage.term, 10, 'the damage holds the ceiling, not the older stored term');
  assert.deepEqual({ term: reopened.storage.hardState().term, vote: reopened.storage.hardState().vote }, { term: 10, vote: 0 });

  // As a member of its group: node 2's append of term 9 is refused; it does not count as an acknowledgement.
  const g = new RaftGroup<string>({ id: 7, self: 1, store: reopened, conf: { voters: [1, 2, 3], learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
  g.setApplier({ apply: () => '', applied: () => undefined, restore: () => undefined });
  const sent: Message[] = [];
  const host = new RaftNodeHost({
    self: 1,
    kv: beforeLoss,
    disk: lost,
    tickMs: 1000,
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    ticks: { every: () => () => undefined },
    logger: pino({ level: 'silent' }),
    onFatal: (err) => assert.fail(`the host stopped: ${String(err)}`),
  });
  host.start({ send: (groups) => groups.forEach((x) => sent.push(...x.messages)) });
  host.add(g as RaftGroup<unknown>);
  host.receive(7, makeMessage({ type: 'app', from: 2, to: 1, term: 9, index: 4, logTerm: 9, entries: [{ term: 9, index: 5, type: 'normal', data: Buffer.from('stale') }], commit: 4 }));
  await until(() => sent.some((m) => m.to === 2), 'an answer to node 2');
  const answer = sent.find((m) => m.to === 2)!;
  assert.equal(answer.term, 10, 'the answer carries term 10: node 2 learns it was deposed');
  assert.ok(answer.type !== 'appResp' || answer.reject || answer.index < 5, `no acknowledgement of 5@9: ${JSON.stringify({ ...answer, entries: undefined })}`);
  assert.equal(reopened.storage.lastIndex(), 4, 'the stale entry is not stored');
  await host.close();
});

test('the host makes the term ceiling durable before a message carries a higher term', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  const store = await RaftLogStore.open(kv, 3, { disk });
  await store.bootstrap([1, 2, 3]);
  const g = new RaftGroup<string>({ id: 3, self: 1, store, conf: { voters: [1, 2, 3], learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
  g.setApplier({ apply: () => '', applied: () => undefined, restore: () => undefined });
  const seen: { term: number; ceiling: number; markerCeiling: number }[] = [];
  const host = new RaftNodeHost({
    self: 1,
    kv,
    disk,
    tickMs: 1000,
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    ticks: { every: () => () => undefined },
    logger: pino({ level: 'silent' }),
    onFatal: (err) => assert.fail(`the host stopped: ${String(err)}`),
  });
  host.start({
    send: (groups) => {
      for (const x of groups) {
        for (const m of x.messages) {
          // What the marker holds durably at the moment the message leaves.
          void cell.read().then((r) => {
            const markerCeiling = r.state === 'ok' && r.payload[8] === 0 ? r.payload.readUInt32BE(13) : 0;
            seen.push({ term: m.term, ceiling: disk.termCeiling, markerCeiling });
          });
        }
      }
    },
  });
  host.add(g as RaftGroup<unknown>);
  // Node 2 campaigns in term 5; this node votes (term 5 comes from the message, not an election here).
  host.receive(3, makeMessage({ type: 'vote', from: 2, to: 1, term: 5, index: 3, logTerm: 1 }));
  await until(() => seen.length > 0, 'the vote answer left');
  await new Promise((r) => setTimeout(r, 10));
  for (const s of seen) assert.ok(s.term <= s.markerCeiling, `a message of term ${s.term} left with the marker's ceiling at ${s.markerCeiling}`);
  assert.equal(host.stats.ceilingRaises, 1);
  await host.close();
});

// A wiped directory keeps no ceiling: its empty member learns a term floor from the other voters
// (src/raft termProbe). The floor is written with the hard state, the damage mark loses termUnknown in
// the same write, and the node's ceiling rises to it before the member's next message leaves.
test('a wiped member\'s term floor is made durable with its hard state and raises the node\'s term ceiling; a restart before it asks again, one after does not', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId, logger: quiet });
  assert.equal(disk.termCeiling, 0, 'a fresh directory: no ceiling');
  const open = async (store: RaftLogStore) => {
    const g = new RaftGroup<string>({ id: 7, self: 1, store, conf: { voters: [], learners: [] }, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 }, termProbePeers: [1, 2, 3] });
    g.setApplier({ apply: () => '', applied: () => undefined, restore: () => undefined });
    const sent: Message[] = [];
    const host = new RaftNodeHost({ self: 1, kv, disk, tickMs: 1000, clock: { nowMs: () => 0, monotonicMs: () => 0 }, ticks: { every: () => () => undefined }, logger: pino({ level: 'silent' }), onFatal: (err) => assert.fail(`the host stopped: ${String(err)}`) });
    host.start({ send: (groups) => groups.forEach((x) => sent.push(...x.messages)) });
    host.add(g as RaftGroup<unknown>);
    host.kick(7);
    return { g, host, sent };
  };
  const store = await RaftLogStore.open(kv, 7, { disk });
  await store.startEmpty([], 'wiped', true);
  const first = await open(store);
  await until(() => first.sent.filter((m) => m.type === 'termProbe').length === 2, 'probes to nodes 2 and 3');
  first.host.receive(7, makeMessage({ type: 'termProbeResp', from: 2, to: 1, term: 12 }));
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(store.damage?.termUnknown, true, 'one answer of two: nothing learned');
  await first.host.close();
  // A restart before the floor was learned asks again.
  const again = await RaftLogStore.open(kv, 7, { disk });
  assert.equal(again.damage?.termUnknown, true);
  const second = await open(again);
  await until(() => second.sent.filter((m) => m.type === 'termProbe').length === 2, 'asked again after the restart');
  second.host.receive(7, makeMessage({ type: 'termProbeResp', from: 3, to: 1, term: 15 }));
  second.host.receive(7, makeMessage({ type: 'termProbeResp', from: 2, to: 1, term: 12 }));
  await until(() => again.damage?.termUnknown === undefined, 'the floor learned and written');
  assert.equal(again.storage.hardState().term, 15, 'the hard state at the floor');
  assert.equal(again.damage?.term, 15, 'still damaged, at least at the floor');
  // A deposed leader of term 14 gets a refusal carrying term 15 (after the ceiling is durable).
  second.host.receive(7, makeMessage({ type: 'app', from: 2, to: 1, term: 14, index: 0, logTerm: 0, entries: [{ term: 14, index: 1, type: 'normal', data: Buffer.from('stale') }], commit: 0 }));
  await until(() => second.sent.some((m) => m.type === 'appResp'), 'an answer to the deposed leader');
  assert.equal(second.sent.find((m) => m.type === 'appResp')!.term, 15);
  assert.ok(disk.termCeiling >= 15, `the node's ceiling rose to the floor (${disk.termCeiling})`);
  await second.host.close();
  const third = await RaftLogStore.open(kv, 7, { disk });
  assert.deepEqual({ term: third.damage?.term, unknown: third.damage?.termUnknown, hs: third.storage.hardState().term }, { term: 15, unknown: undefined, hs: 15 }, 'a restart after it does not ask again');
});
