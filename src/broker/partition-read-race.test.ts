/**
 * Goal: a read never fails on a healthy replica because memory compaction ran while it was reading.
 * A read takes the batches older than the in-memory index of recent batches from the offset index in
 * the KV (up to the first recent one), then the rest from the in-memory index. A compaction that
 * finished between the two (its batches' rows are in the KV; they leave the in-memory index) made the
 * second part start after where the first stopped: 'offsets 13..21 are missing', and the replica then
 * refused every read for good (host simulation, seed 174 once it read a fetched log back while the
 * replica compacted its memory).
 * Method: one node, ten batches applied and their rows written; a read of them all starts, and while
 * it waits for the KV the in-memory index forgets the first seven (as a compaction does).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Offset } from '../core/offset.js';
import { MemoryKv } from '../log/index.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';

test('a read that memory compaction overtakes returns every event, in order', async () => {
  const kv = new MemoryKv();
  const { host, replicas, close } = oneNodeReplicas(kv);
  try {
    for (let i = 0; i < 10; i++) {
      const [a] = await replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
      assert.ok(a?.ok);
    }
    await host.flushRows();
    const r = replicas.replica(7, 0)!;
    const first = r.group.store.storage.firstIndex();
    // The first three batches already left the in-memory index (their rows are in the KV).
    r.forgetBefore(first + 3);
    const reading = r.read(-1 as Offset, 100, 1 << 20);
    // While the read waits for the KV, a compaction drops four more from the in-memory index.
    r.forgetBefore(first + 7);
    const got = await reading;
    assert.deepEqual(got.map((e) => e.offset), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const again = await r.read(-1 as Offset, 100, 1 << 20);
    assert.equal(again.length, 10, 'the replica still reads');
  } finally {
    await close();
  }
});
