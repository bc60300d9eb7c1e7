/**
 * Goal: after retention, the snapshot a follower is sent says where the log now starts, also when a
 * memory compaction was running while retention removed entries. That compaction took its image
 * (with the log start of the time) before the removal; retention skipped its own refresh of the
 * snapshot because a compaction was running, so the stored image named removed entries, and a
 * follower sent it asked for them again and again (host simulation, seed 292, Liveness).
 * Method: one node keeping 4 entries in memory, whose writes take a few milliseconds: batches are
 * appended so that a compaction runs, retention runs meanwhile, and once all is written the stored
 * snapshot's image must start where the log does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryKv } from '../log/index.js';
import { decodeImage } from './partition-replica.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';

test('retention while a memory compaction runs leaves a snapshot that names where the log starts', async () => {
  const kv = new MemoryKv();
  kv.beforeWrite = () => new Promise((res) => setTimeout(res, 2));
  const t = { now: 0 };
  const { host, replicas, close } = oneNodeReplicas(kv, { clockMs: () => t.now, memoryEntries: 4 });
  try {
    for (let i = 0; i < 20; i++) {
      t.now = i;
      const [a] = await replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
      assert.ok(a?.ok);
    }
    const r = replicas.replica(7, 0)!;
    let checked = 0;
    for (let round = 0; round < 10; round++) {
      // An append whose apply starts a compaction, then retention before it has ended.
      t.now = 20 + round;
      const [a] = await replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${20 + round}}`)] }]);
      assert.ok(a?.ok);
      await replicas.applyRetention(7, 0, 1_700_000_000_000 + 2 * (round + 1));
      await host.flushRows();
      await new Promise((res) => setTimeout(res, 30));
      const [first] = await r.logStart();
      const stored = decodeImage(r.group.store.storage.snapshot().data).start?.[0];
      assert.equal(stored, first, `round ${round}: the stored snapshot names entry ${stored}, the log starts at ${first}`);
      checked++;
    }
    assert.equal(checked, 10);
  } finally {
    await close();
  }
});
