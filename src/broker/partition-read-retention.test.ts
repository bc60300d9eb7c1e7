/**
 * Goal: a read that retention overtakes answers "expired" (the reader starts again at the oldest
 * offset), never "corrupt". A read takes the offset index rows of the batches it wants, then their
 * entries; retention removing those rows and entries in between made the entries look lost: 'raft
 * entry 40 of the batch 83..85 is missing', and the healthy replica refused every read for good
 * (a race the host simulation's readers meet once it applies retention).
 * Method: one node, 40 batches whose rows and entries are in the KV only; reads from the start are
 * begun together with retention passes that remove more and more of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Offset } from '../core/offset.js';
import { MemoryKv, OffsetExpiredError } from '../log/index.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';

test('a read overtaken by retention is expired, not corrupt, and the replica reads on', async () => {
  const kv = new MemoryKv();
  const t = { now: 0 };
  const { host, replicas, close } = oneNodeReplicas(kv, { clockMs: () => t.now, memoryEntries: 4 });
  try {
    for (let i = 0; i < 40; i++) {
      t.now = i;
      const [a] = await replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
      assert.ok(a?.ok);
    }
    await host.flushRows();
    const r = replicas.replica(7, 0)!;
    let expired = 0;
    for (let cut = 2; cut <= 30; cut += 2) {
      const after = r.localOldest - 1;
      const reading = r.read(after as Offset, 100, 1 << 20).then(
        (events) => {
          // What it returns is what the offsets hold, in order from where it began.
          events.forEach((e, k) => assert.equal(e.offset, after + 1 + k));
          for (const e of events) assert.equal((JSON.parse(e.bytes.toString()) as { n: number }).n, e.offset);
        },
        (err: unknown) => {
          assert.ok(err instanceof OffsetExpiredError, `read after ${after} while retention cut to ${cut}: ${String(err)}`);
          expired++;
        },
      );
      await replicas.applyRetention(7, 0, 1_700_000_000_000 + cut);
      await reading;
      const rest = await r.read((r.localOldest - 1) as Offset, 100, 1 << 20);
      assert.equal(rest[0]?.offset, r.localOldest, 'the replica reads on from its oldest offset');
    }
    assert.ok(expired > 0, 'some reads were overtaken');
  } finally {
    await close();
  }
});
