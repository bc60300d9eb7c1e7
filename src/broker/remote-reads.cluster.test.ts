// Goal: a node holding no replica of a partition serves it like one (issue 9, "any node serves any
// request"): (1) its cursor tools answer with the partition's end as it is right after a publish
// acknowledged on another node (a client that publishes and then asks sees its events), not with
// bounds a replica told it up to a second ago; (2) a low-level stream with batch_limit=1 drains a
// backlog of 3,000 events from it whole, in order (each event a call to the replica before, cancelled
// after its chunk: the replica's HTTP/2 server took the resets for an attack after about a thousand
// and closed the connection, which ended the stream with an error).
// Method: cluster/up 3 with BROOK_REPLICATION_FACTOR=1 and one partition per event type, in a temporary
// directory on free ports; the two nodes without the partition's replica are asked and streamed from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeOfMember } from '../core/member-id.js';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { closeAllStreams, countEvents, cursorsHeader, openStream, readUntil, type StreamLine } from '../testing/stream-client.js';

interface View {
  partitions?: { event_type: string; partition: string; replicas: number[] }[];
}

const cluster = await LocalCluster.create('brook-remote-reads-test-', { BROOK_REPLICATION_FACTOR: '1', BROOK_PARTITIONS_DEFAULT: '1', BROOK_METADATA_TIMEOUT_MS: '2000' });
const url = (i: number) => cluster.url(i);

async function newestOn(i: number, name: string): Promise<string> {
  const r = await call(url(i), 'GET', `/event-types/${name}/partitions`);
  assert.equal(r.status, 200, r.text);
  return (r.body as { newest_available_offset: string }[])[0]!.newest_available_offset;
}

test('a node holding no replica: cursor tools see a publish acknowledged elsewhere at once, and a batch_limit=1 stream drains a backlog', { timeout: 240_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  try {
    cluster.run('up', '3');
    const leader = await cluster.agreedMetadataLeader([1, 2, 3], 10_000);
    await cluster.created(leader, '/event-types', businessEventType('far'));
    const placed = await cluster.until('the placement of far', 10_000, async () => (await cluster.view<View>(leader))?.partitions?.find((p) => p.event_type === 'far'));
    const holder = nodeOfMember(placed.replicas[0]!);
    const others = [1, 2, 3].filter((n) => n !== holder);
    t.diagnostic(`partition 0 on node ${holder}; asked on nodes ${others.join(', ')}`);
    await cluster.until('a first publish', 20_000, async () => ((await call(url(holder), 'POST', '/event-types/far/events', [businessEvent('w0')])).status === 200 ? true : undefined));
    // Every node has asked a replica for the bounds once (they are cached from here on).
    for (const n of others) await cluster.until(`node ${n} knows the first event`, 10_000, async () => ((await newestOn(n, 'far')) === (await newestOn(holder, 'far')) ? true : undefined));

    // (1) Publish on one node (in turn: the holder and the others), ask the other two at once.
    for (let round = 0; round < 6; round++) {
      const via = [holder, ...others][round % 3]!;
      const pub = await call(url(via), 'POST', '/event-types/far/events', Array.from({ length: 5 }, (_, k) => businessEvent(`r${round}-${k}`)));
      assert.equal(pub.status, 200, pub.text);
      const newest = await newestOn(holder, 'far');
      for (const n of others.filter((o) => o !== via)) {
        assert.equal(await newestOn(n, 'far'), newest, `round ${round}: node ${n}'s partitions after a publish on node ${via}`);
        const lag = await call(url(n), 'POST', '/event-types/far/cursors-lag', [{ partition: '0', offset: 'BEGIN' }]);
        assert.equal(lag.status, 200, lag.text);
        assert.equal((lag.body as { newest_available_offset: string }[])[0]!.newest_available_offset, newest, `round ${round}: node ${n}'s cursors-lag`);
        // The newest cursor is no cursor "not existing yet" there.
        const dist = await call(url(n), 'POST', '/event-types/far/cursor-distances', [{ initial_cursor: { partition: '0', offset: 'BEGIN' }, final_cursor: { partition: '0', offset: newest } }]);
        assert.equal(dist.status, 200, `round ${round}: node ${n}'s cursor-distances: ${dist.text}`);
        assert.equal((dist.body as { distance: number }[])[0]!.distance, 1 + 5 * (round + 1));
      }
    }

    // (2) A backlog, read with batch_limit=1 from BEGIN on each node holding no replica.
    for (let b = 0; b < 6; b++) {
      const r = await call(url(holder), 'POST', '/event-types/far/events', Array.from({ length: 500 }, (_, k) => businessEvent(`b${b}-${k}`)));
      assert.equal(r.status, 200, r.text);
    }
    const total = 1 + 5 * 6 + 3000;
    for (const n of others) {
      const res = await openStream(url(n), 'far', `batch_limit=1&stream_limit=${total}&batch_flush_timeout=1`, cursorsHeader([{ partition: '0', offset: 'BEGIN' }]));
      assert.equal(res.status, 200);
      const lines: StreamLine[] = await readUntil(res, (ls) => countEvents(ls) >= total, 120_000);
      const orders = lines.flatMap((l) => (l.events ?? []).map((e) => e.order_number));
      assert.equal(orders.length, total, `node ${n} streamed every event`);
      assert.equal(new Set(orders).size, total, `node ${n} streamed no event twice`);
      assert.deepEqual(orders.slice(-2), ['b5-498', 'b5-499']);
    }
  } finally {
    await closeAllStreams();
    cluster.destroy();
  }
});
