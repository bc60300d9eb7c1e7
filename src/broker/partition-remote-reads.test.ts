// Goal: a node holding no replica of a partition reads a backlog one event at a time (a stream with a
// window of one event) with few reads sent to a replica, not one per event, and reads each call to a
// replica to its end instead of cancelling it after the chunk (a cancel is an HTTP/2 RST_STREAM, and a
// replica's HTTP/2 server closes a connection after a burst of about a thousand of them).
// Method: PartitionRemoteReads over a fake forwarder that serves a dense log and counts calls, and
// calls left before their end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Offset } from '../core/offset.js';
import { PartitionRemoteReads } from './partition-remote-reads.js';
import { ReplicasContext } from './partition-replicas-context.js';
import type { PartitionReplicasOptions, RemoteReadChunk, RemoteReadRequest } from './partition-replicas-types.js';

/** Node 3, holding no replica of partition 0 of topic 1 (on nodes 1 and 2), whose log holds `events`. */
function remoteReads(events: number, size = 100, splitAt?: number) {
  const calls = { reads: 0, leftEarly: 0, asked: [] as RemoteReadRequest[] };
  const o = {
    self: 3,
    placement: () => ({ group: 7, replicas: [1, 2] }),
    clock: { nowMs: () => Date.now(), monotonicMs: () => performance.now() },
  } as unknown as PartitionReplicasOptions;
  const c = new ReplicasContext(o);
  c.forwarder = {
    async *read(_to: number, req: RemoteReadRequest): AsyncIterable<RemoteReadChunk> {
      calls.reads++;
      calls.asked.push(req);
      let ended = false;
      try {
        const out = [];
        let bytes = 0;
        for (let off = req.afterOffset + 1; off < events && out.length < req.maxEvents; off++) {
          if (out.length > 0 && bytes + size > req.maxBytes) break;
          out.push({ offset: off, bytes: Buffer.alloc(size, 97) });
          bytes += size;
        }
        // The transport splits one answer into chunks at a gap in the offsets (forward-codec.ts).
        const cut = splitAt === undefined ? out.length : out.findIndex((e) => e.offset >= splitAt);
        if (cut > 0 && cut < out.length) {
          yield { events: out.slice(0, cut), oldest: 0, newest: events - 1, epoch: 2 };
          yield { events: out.slice(cut), oldest: 0, newest: events - 1, epoch: 2 };
        } else yield { events: out, oldest: 0, newest: events - 1, epoch: 2 };
        ended = true;
      } finally {
        if (!ended) calls.leftEarly++;
      }
    },
  } as ReplicasContext['forwarder'];
  return { reads: new PartitionRemoteReads(c), calls };
}

test('a backlog read one event at a time takes a few reads of a replica, each read to its end', async () => {
  const { reads, calls } = remoteReads(3000);
  let after = -1 as Offset;
  let got = 0;
  while (after < 2999) {
    const evs = await reads.read(1, 0, after, 1, 1_000_000, 0);
    assert.equal(evs.length, 1);
    assert.equal(evs[0]!.offset, after + 1, 'no event skipped or repeated');
    after = evs[0]!.offset;
    got++;
  }
  assert.equal(got, 3000);
  // Before the read-ahead: one read per event (3000), each cancelled after its chunk.
  assert.ok(calls.reads <= 4, `${calls.reads} reads sent to a replica for 3000 events`);
  assert.equal(reads.remoteReadsSent, calls.reads);
  assert.equal(calls.leftEarly, 0, 'every call to a replica read to its end');
});

test('the read-ahead keeps within the byte bound the caller gives, and a read elsewhere in the log asks again', async () => {
  const { reads, calls } = remoteReads(5000, 1000);
  const first = await reads.read(1, 0, -1 as Offset, 2, 50_000, 0);
  assert.deepEqual(first.map((e) => e.offset), [0, 1]);
  assert.equal(calls.asked[0]!.maxBytes, 50_000);
  assert.equal(calls.asked[0]!.maxEvents, 1000);
  // 50 events fit 50,000 bytes: 2..49 come from what the first read brought.
  const kept = await reads.read(1, 0, 1 as Offset, 100, 50_000, 0);
  assert.deepEqual([kept[0]!.offset, kept.length], [2, 48]);
  assert.equal(calls.reads, 1);
  // Another place in the log: asked of the replica.
  const far = await reads.read(1, 0, 3000 as Offset, 1, 50_000, 0);
  assert.deepEqual(far.map((e) => e.offset), [3001]);
  assert.equal(calls.reads, 2);
  // A long-poll (a wait for news) asks for what it asks for only.
  await reads.read(1, 0, 4000 as Offset, 1, 1, 1000);
  assert.equal(calls.asked[2]!.maxEvents, 1);
  // The first place is still kept (several runs per partition).
  assert.deepEqual((await reads.read(1, 0, 10 as Offset, 1, 50_000, 0)).map((e) => e.offset), [11]);
  assert.equal(calls.reads, 3);
});

test('an answer that reaches this node in several chunks is read whole', async () => {
  const { reads, calls } = remoteReads(3000, 100, 600);
  const got = await reads.read(1, 0, 499 as Offset, 1, 1_000_000, 0);
  assert.deepEqual(got.map((e) => e.offset), [500]);
  const next = await reads.read(1, 0, 500 as Offset, 1000, 1_000_000, 0);
  assert.deepEqual([next[0]!.offset, next.at(-1)!.offset], [501, 1499], 'both chunks of the first answer kept');
  assert.equal(calls.reads, 1);
  assert.equal(calls.leftEarly, 0);
});
