// Goal: a partition group writes no hard state per publish (one that only moves the commit index is
// not written: raft-log-store.ts), and a restart still serves everything acknowledged, after a clean
// stop and after a crash that loses every unsynced write: the group of one recommits its whole durable
// log at open, whatever its stored commit index says.
// Method: a single node's partition groups over a MemoryKv (crash() keeps only what was fsynced); the
// stored hard state is read from the KV.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import type { Offset } from '../core/offset.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';
import type { PartitionReplicas } from './partition-replicas.js';
import { groupKey, kindHardState } from './raft-keys.js';
import { decodeHardStateRecord } from './raft-records.js';

const events = (from: number, n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`{"n":${from + i}}`));

async function readAll(r: PartitionReplicas): Promise<number[]> {
  const out: number[] = [];
  let after = -1;
  for (;;) {
    const got = await r.read(7, 0, after as Offset, 1000, 1 << 20);
    if (got.length === 0) return out;
    for (const e of got) out.push((JSON.parse(e.bytes.toString()) as { n: number }).n);
    after = got[got.length - 1]!.offset;
  }
}

test('publishes write no hard state, and a restart (clean, or after a crash) serves everything acknowledged', async () => {
  const kv = new MemoryKv();
  const n = oneNodeReplicas(kv);
  let written = 0;
  const append = async (node: typeof n) => {
    const [r] = await node.replicas.append([{ topic: 7, partition: 0, events: events(written, 2) }]);
    assert.ok(r?.ok);
    written += 2;
  };
  await append(n);
  const group = n.replicas.replica(7, 0)!.groupId;
  const hk = groupKey(group, kindHardState);
  const stored = async (k: MemoryKv) => decodeHardStateRecord(hk, (await k.get(hk))!);
  const before = await stored(kv);
  for (let i = 0; i < 40; i++) await append(n);
  const last = n.replicas.replica(7, 0)!.group.store.storage.lastIndex();
  assert.deepEqual(await stored(kv), before, 'no hard state written by 40 publishes');
  assert.ok(before.commit < last - 40, `stored commit ${before.commit}, last index ${last}`);
  await n.close();

  // A clean stop: the stored commit index still lags; everything is served at once after the start.
  const m = oneNodeReplicas(kv);
  await m.replicas.ensure(7, 0);
  assert.deepEqual(m.replicas.bounds(7, 0), { oldest: 0, newest: written - 1 });
  assert.deepEqual(await readAll(m.replicas), Array.from({ length: written }, (_, i) => i));
  for (let i = 0; i < 5; i++) await append(m);
  await m.host.close();

  // A crash that loses every unsynced write (the rows and applied state of the last entries too).
  const after = kv.crash();
  const c = oneNodeReplicas(after);
  await c.replicas.ensure(7, 0);
  assert.deepEqual(c.replicas.bounds(7, 0), { oldest: 0, newest: written - 1 });
  assert.deepEqual(await readAll(c.replicas), Array.from({ length: written }, (_, i) => i));
  await append(c);
  assert.equal(c.replicas.bounds(7, 0).newest, written - 1);
  await c.close();
});
