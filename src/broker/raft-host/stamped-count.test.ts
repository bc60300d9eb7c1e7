/**
 * Goal: the host counts apart the messages of a group that stamps what it sends (the metadata group's
 * read leases, RaftGroup.outgoing), so that what leases keep sending while anything publishes can be
 * told from the partition groups' traffic (brook_raft_host_work_total{what="stampedMessagesSent"}).
 * Method: one RaftNodeHost (MemoryKv, no ticks) with two three-voter groups whose peers do not exist;
 * each campaigns and sends its two vote requests through a transport that records them. Only the group
 * with an outgoing hook counts as stamped, and its messages leave stamped (the hook ran on them).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv } from '../../log/index.js';
import type { Message, NodeId } from '../../raft/index.js';
import { systemClock } from '../system.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftNodeHost, type GroupMessages } from './node-host.js';
import { RaftGroup } from './raft-group.js';

const ids: NodeId[] = [1, 2, 3];

async function group(kv: MemoryKv, id: number): Promise<RaftGroup<string>> {
  const store = await RaftLogStore.open(kv, id);
  await store.bootstrap(ids);
  const g = new RaftGroup<string>({ id, self: 1, store, conf: { voters: ids, learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
  g.setApplier({ apply: (e) => Buffer.from(e.data).toString(), applied: () => undefined, restore: () => undefined });
  return g;
}

test('messages of a group that stamps what it sends are counted apart', { timeout: 10_000 }, async () => {
  const kv = new MemoryKv();
  const sent: GroupMessages[] = [];
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 1_000_000, clock: systemClock, ticks: { every: () => () => undefined }, logger: pino({ level: 'silent' }), onFatal: (err) => assert.fail(String(err)) });
  host.start({ send: (gs) => sent.push(...gs) });
  const plain = await group(kv, 7);
  const stamping = await group(kv, 8);
  stamping.outgoing = (m: Message) => ({ ...m, context: 'stamped' });
  host.add(plain as RaftGroup<unknown>);
  host.add(stamping as RaftGroup<unknown>);
  plain.raw.campaign();
  stamping.raw.campaign();
  host.kick(7);
  host.kick(8);
  const t0 = Date.now();
  while (sent.reduce((n, gm) => n + gm.messages.length, 0) < 4) {
    assert.ok(Date.now() - t0 < 5_000, 'both groups sent their vote requests');
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.equal(host.stats.messagesSent, 4);
  assert.equal(host.stats.stampedMessagesSent, 2, 'only the stamping group counts as stamped');
  for (const gm of sent) for (const m of gm.messages) assert.equal(m.context === 'stamped', gm.group === 8, `group ${gm.group}: stamped only by its own hook`);
  await host.close();
});
