// Goal: the applied state of a partition replica survives a crash at any point (partition-replica.ts,
// "The applied state is stored as the applied row together with the newest index row"). An entry that
// writes index rows writes no applied row, so the applied row a start reads is often older than the
// rows beside it; the start must take the rows' word for it, and what it applies again from the log must
// give the same rows and the same state as the replica that never stopped (re-applying is idempotent).
// Method: every KV write of a single node is recorded; for every prefix of them (what a crash that kept
// exactly those writes leaves), a node is opened on it and its replica compared with the state the
// running replica had at the same applied index: offsets, request-id window, seal, every index row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MemoryKv } from '../log/index.js';
import type { Offset } from '../core/offset.js';
import type { PartitionImage } from '../replication/partition-state.js';
import type { PartitionReplicas } from './partition-replicas.js';
import { prefixApplied, prefixOffsetIndex } from './partition-replica.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';
import { RecordingKv } from '../testing/recording-kv.js';

function node(kv: MemoryKv, clock: { t: number }) {
  return oneNodeReplicas(kv, { clockMs: () => clock.t });
}

const events = (from: number, n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`{"n":${from + i}}`));

async function readAll(r: PartitionReplicas, after: number): Promise<{ offset: number; n: number }[]> {
  const out: { offset: number; n: number }[] = [];
  for (;;) {
    const got = await r.read(7, 0, after as Offset, 1000, 1 << 20);
    if (got.length === 0) return out;
    for (const e of got) out.push({ offset: e.offset, n: (JSON.parse(e.bytes.toString()) as { n: number }).n });
    after = got[got.length - 1]!.offset;
  }
}

/**
 * The state a replica compares by: its image with the request ids of events held from `oldest` on.
 * Retention is no part of the replicated state (each replica cuts on its own clock): a start after
 * retention's removal and before the entry that followed it holds less than the running replica did
 * at that index, never more.
 */
function comparable(img: PartitionImage, oldest: number): object {
  return { applied: img.applied, next: img.next, sealed: img.sealed, recent: img.recent.filter(([, first]) => first >= oldest) };
}

const isRow = (k: Buffer) => k[0] === prefixOffsetIndex;

test('a crash after any write leaves an applied state that, applied on from the log, is the one the running replica had', async () => {
  const clock = { t: 0 };
  const kv = new RecordingKv();
  const n = node(kv, clock);
  const r = (await n.replicas.ensure(7, 0))!;
  // The state the running replica had after each applied index.
  const states = new Map<number, PartitionImage>([[r.group.applied, r.image()]]);
  const applyEntry = r.group.applyEntry.bind(r.group);
  r.group.applyEntry = (e) => {
    applyEntry(e);
    states.set(e.index, r.image());
  };
  let written = 0;
  const append = async (size: number) => {
    const [res] = await n.replicas.append([{ topic: 7, partition: 0, events: events(written, size) }]);
    assert.ok(res?.ok, String(res !== undefined && !res.ok && res.error));
    written += size;
  };
  for (let i = 0; i < 12; i++) {
    clock.t = i;
    await append(1 + (i % 3));
  }
  // Batches that share an entry (one turn), and a retried request id: an entry that appends nothing
  // (no index row: the applied row says it was applied).
  clock.t = 20;
  const together = await n.replicas.append([0, 1, 2].map((i) => ({ topic: 7, partition: 0, events: events(written + i * 10, 1) })));
  assert.ok(together.every((x) => x.ok));
  written += 30;
  const req = { group: r.groupId, topic: 7, partition: 0, epoch: r.group.term, requestId: 'retried', flowId: '', deadlineMs: 2000, events: events(1000, 2) };
  assert.equal((await n.replicas.appendForwarded(req)).status, 'committed');
  assert.equal((await n.replicas.appendForwarded(req)).status, 'committed');
  for (let i = 0; i < 6; i++) await append(2);
  // Retention removes the oldest rows (a write of its own), then more is appended, then the log is sealed.
  clock.t = 40;
  assert.ok((await n.replicas.applyRetention(7, 0, 1_700_000_000_000 + 5)) > 0);
  for (let i = 0; i < 4; i++) await append(1);
  assert.equal(typeof (await n.replicas.control(7, 0, { kind: 'seal', timeline: 'T2', floor: 0 })), 'number');
  // Retention of everything: the newest index row goes too.
  clock.t = 60;
  assert.ok((await n.replicas.applyRetention(7, 0, 1_700_000_000_000 + 100)) > 0);
  assert.equal(n.replicas.bounds(7, 0).oldest, n.replicas.bounds(7, 0).newest + 1);
  await n.close();
  const appliedKey = Buffer.alloc(5);
  appliedKey[0] = prefixApplied;
  appliedKey.writeUInt32BE(r.groupId, 1);

  // Every index row ever written, by key: a row written again must be the same bytes.
  const rows = new Map<string, string>();
  for (const w of kv.writes) for (const op of w) if (op.kind === 'put' && isRow(op.key)) rows.set(op.key.toString('hex'), op.value.toString('hex'));
  let staleAppliedRows = 0;
  for (let k = 1; k <= kv.writes.length; k++) {
    const img = kv.prefix(k);
    const m = node(img, clock);
    const r2 = await m.replicas.ensure(7, 0);
    if (r2 === undefined) {
      await m.close();
      continue;
    }
    const at = r2.group.applied;
    assert.equal(at, r2.group.store.storage.lastIndex(), `prefix ${k}: the group of one applied its whole durable log at open`);
    const want = states.get(at);
    assert.ok(want !== undefined, `prefix ${k}: applied ${at} is an index the running replica applied`);
    const got = r2.image();
    assert.ok(got.oldest >= want.oldest, `prefix ${k}: oldest ${got.oldest}, below the running replica's ${want.oldest}`);
    assert.deepEqual(comparable(got, got.oldest), comparable(want, got.oldest), `prefix ${k}: the state at index ${at}`);
    const reads = await readAll(m.replicas, r2.localOldest - 1);
    assert.equal(reads.length, r2.bounds().newest - r2.localOldest + 1, `prefix ${k}: every held event is read`);
    // The rows the start wrote (re-applied entries) are the bytes the running replica wrote for them.
    await m.host.flushRows();
    for await (const [key, value] of img.iterate({ gte: Buffer.from([prefixOffsetIndex]), lt: Buffer.from([prefixOffsetIndex + 1]) })) {
      assert.equal(rows.get(key.toString('hex')), value.toString('hex'), `prefix ${k}: row ${key.toString('hex')}`);
    }
    await m.close();
    // Count the crash points where the stored applied row was older than the rows beside it.
    const stored = kv.prefix(k);
    const ar = await stored.get(appliedKey);
    let newestRow: Buffer | undefined;
    for await (const [, v] of stored.iterate({ gte: Buffer.from([prefixOffsetIndex]), lt: Buffer.from([prefixOffsetIndex + 1]), reverse: true, limit: 1 })) newestRow = v;
    if (ar !== null && newestRow !== undefined && newestRow.readBigUInt64BE(1) > ar.readBigUInt64BE(0)) staleAppliedRows++;
  }
  assert.ok(staleAppliedRows > 10, `crash points with an applied row older than the newest index row: ${staleAppliedRows}`);
});
