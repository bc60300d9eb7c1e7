/**
 * Goal: a try at fetching the log before a snapshot whose offsets run past the snapshot's next offset
 * (its start was taken wrong, or it met a retry it could not tell) stores nothing of the part that
 * does: no index row at or past that offset is written. Found by the host simulation with retention
 * (seeds 125 and 178): such a try wrote those rows too, over the rows of batches applied after the
 * snapshot, and removing what the try stored (the offsets below the snapshot) left them naming entries
 * that were gone: the replica refused reads of those offsets, also after a restart.
 * Method: one node, ten one-event batches (offsets 0 to 9) whose entries and rows are in the KV; the
 * node's own log is stored again as history with a scratch state three offsets ahead and the
 * snapshot's next offset taken as 10 (as a replica fetching it from a wrong start would).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Offset } from '../core/offset.js';
import { MemoryKv } from '../log/index.js';
import type { Entry } from '../raft/index.js';
import { PartitionState } from '../replication/partition-state.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';
import { HistoryMissingError, type PartitionReplica } from './partition-replica.js';

async function events(r: PartitionReplica): Promise<[number, number][]> {
  const got = await r.read(-1 as Offset, 100, 1 << 20);
  return got.map((e) => [e.offset, (JSON.parse(e.bytes.toString()) as { n: number }).n]);
}

test('history whose offsets run past the snapshot is refused before any of its rows is written; the replica reads its log, also after a restart', async () => {
  const kv = new MemoryKv();
  const want: [number, number][] = Array.from({ length: 10 }, (_, i) => [i, i]);
  let node = oneNodeReplicas(kv, { memoryEntries: 4 });
  try {
    for (let i = 0; i < 10; i++) {
      const [a] = await node.replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
      assert.ok(a?.ok);
    }
    await node.host.flushRows();
    const r = node.replicas.replica(7, 0)!;
    assert.deepEqual(await events(r), want);
    const log: Entry[] = [];
    for await (const chunk of r.readLog(1, r.group.applied, 1 << 20, new AbortController().signal)) log.push(...chunk);
    const scratch = new PartitionState({ applied: 0, next: 3, oldest: 3, recent: [] });
    await assert.rejects(r.storeHistory(log, scratch, 10), HistoryMissingError);
    assert.deepEqual(await events(r), want, 'every offset reads the event it held');
    await node.close();
    node = oneNodeReplicas(kv, { memoryEntries: 4 });
    const again = (await node.replicas.ensure(7, 0))!;
    assert.deepEqual(await events(again), want, 'and after a restart');
  } finally {
    await node.close();
  }
});
