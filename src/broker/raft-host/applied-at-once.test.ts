// Goal: a group of one applies what its write made durable in the turn of that write (node-host.ts,
// #applyCommitted): a publish at a moderate rate (one at a time) costs one turn of the host, not two,
// and its answer does not wait for the next turn's proposals and the filling of its write.
// Method: a single node's partition groups over a MemoryKv; publishes one after the other, each
// awaited; the host's counts of turns and of Readies applied at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../../log/index.js';
import { oneNodeReplicas } from '../../testing/one-node-replicas.js';

test('a publish alone on one node takes one turn: its entry is applied in the turn that wrote it', async () => {
  const n = oneNodeReplicas(new MemoryKv());
  const first = await n.replicas.append([{ topic: 7, partition: 0, events: [Buffer.from('{"n":0}')] }]);
  assert.ok(first[0]?.ok);
  const s0 = { ...n.host.stats };
  const publishes = 30;
  for (let i = 1; i <= publishes; i++) {
    const [r] = await n.replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
    assert.ok(r?.ok && r.first === i);
  }
  const turns = n.host.stats.turns - s0.turns;
  const atOnce = n.host.stats.appliedAtOnce - s0.appliedAtOnce;
  assert.ok(turns <= publishes + 2, `${turns} turns for ${publishes} publishes`);
  assert.ok(atOnce >= publishes, `${atOnce} Readies applied at once`);
  assert.equal(n.host.stats.writes - s0.writes, publishes, 'one write per publish');
  await n.close();
});
