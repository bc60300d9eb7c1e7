// Goal: a single node whose raft marker is gone (a loss it must assume: node-disk.ts) has every raft
// group damaged, its metadata group and its partitions (replication factor 1: nobody can repair
// them). It refuses to start, naming BROOK_ACCEPT_METADATA_LOSS; started once with it, it serves its
// metadata again, but its partitions take no writes until the administrator accepts their loss
// (POST /cluster/accept-loss); then they lead at a higher term, take writes, and every event they held
// reads back in order, followed by the new ones. A later start without the flag is normal.
// Method: a real broker in this process on a temporary RocksDB directory (broker-harness.ts), stopped
// cleanly, its marker file removed, started again (the refused start in a process of its own);
// publishes and reads over HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markerFileName } from '../broker/node-disk.js';
import { businessEventType, call, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { closeAllStreams, countEvents, createEventType, cursorsHeader, eventIn, off, openStream, publish, readToEnd, statisticFor } from '../testing/stream-client.js';

type View = {
  metadata: { raft_damaged: boolean; term: number };
  partitions: { event_type: string; partition: string; group: number; leader: number | null; term: number | null }[];
  accepted_losses: { scope: string; node: number; event_type: string; partition: string; group: number; kept: { newest_offset: string; last_index: number }; term_before: number; term: number; recorded?: boolean }[];
  accepted_losses_older: number;
};

async function until<T>(what: string, ms: number, f: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readAll(base: string, name: string, total: number): Promise<[string, string][]> {
  const res = await openStream(base, name, `batch_limit=1&batch_flush_timeout=1&stream_limit=${total}`, cursorsHeader([{ partition: '0', offset: 'BEGIN' }, { partition: '1', offset: 'BEGIN' }]));
  assert.equal(res.status, 200);
  const lines = await readToEnd(res, 30_000);
  assert.equal(countEvents(lines), total);
  return lines.filter((l) => l.events !== undefined).map((l) => [`${l.cursor.partition}@${l.cursor.offset}`, String(l.events![0]!.order_number)]);
}

test('a single node that lost its raft marker starts with BROOK_ACCEPT_METADATA_LOSS only; its partitions take writes again once the administrator accepts their loss', { timeout: 120_000 }, async () => {
  let broker: TestBroker | undefined = await startTestBroker();
  const dir = broker.dataDir;
  const name = 'loss.orders';
  try {
    await createEventType(broker.url, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(2) }));
    for (let k = 0; k < 6; k++) await publish(broker.url, name, [eventIn(String(k % 2), `o${k}`)]);
    const before = await readAll(broker.url, name, 6);
    const viewBefore = (await call(broker.url, 'GET', '/cluster')).body as View;
    const termsBefore = new Map(viewBefore.partitions.filter((p) => p.event_type === name).map((p) => [p.partition, p.term ?? 0]));
    await closeAllStreams();
    await broker.close();
    broker = undefined;
    rmSync(join(dir, markerFileName));

    // A process of its own: a start that fails leaves this process's RocksDB handle open (a refused
    // process exits, which releases it).
    const refused = spawnSync(process.execPath, [fileURLToPath(new URL('../main.js', import.meta.url))], { env: { ...process.env, BROOK_DATA_DIR: dir, BROOK_PORT: '0' }, encoding: 'utf8', timeout: 60_000 });
    assert.notEqual(refused.status, 0, 'it refuses to start');
    assert.match(refused.stdout + refused.stderr, /metadata raft log of this single-node cluster is damaged.*BROOK_ACCEPT_METADATA_LOSS=true/s, 'naming the lever');

    broker = await startTestBroker({ acceptMetadataLoss: true }, dir);
    const v1 = (await call(broker.url, 'GET', '/cluster')).body as View;
    assert.equal(v1.metadata.raft_damaged, false, 'the metadata group leads again');
    assert.ok(v1.metadata.term > viewBefore.metadata.term);
    assert.equal((await call(broker.url, 'GET', `/event-types/${name}`)).status, 200, 'the metadata it held is kept');
    // The metadata group's own loss is recorded in it once it commits again.
    const metaLoss = await until('the metadata loss to be recorded', 10_000, async () => {
      const v = (await call(broker!.url, 'GET', '/cluster')).body as View;
      return v.accepted_losses.find((l) => l.scope === 'metadata' && l.recorded === true);
    });
    assert.equal(metaLoss.group, 0);
    assert.equal(metaLoss.node, 1);
    assert.ok(metaLoss.term > metaLoss.term_before && metaLoss.kept.last_index > 0, JSON.stringify(metaLoss));
    // The partitions are damaged too (every group of the node), and nobody can repair them.
    const stuck = await call(broker.url, 'POST', `/event-types/${name}/events`, [eventIn('0', 'stuck')]);
    assert.notEqual(stuck.status, 200, `a damaged sole replica takes no write: ${stuck.status} ${stuck.text.slice(0, 200)}`);
    assert.deepEqual(await readAll(broker.url, name, 6), before, 'but reads what it holds');

    const accepted = await call(broker.url, 'POST', '/cluster/accept-loss');
    assert.equal(accepted.status, 200, accepted.text);
    const body = accepted.body as { accepted: View['accepted_losses']; refused: unknown[] };
    const mine = body.accepted.filter((a) => a.event_type === name).sort((a, b) => a.partition.localeCompare(b.partition));
    assert.deepEqual(mine.map((a) => [a.partition, a.kept.newest_offset]), [['0', off(2)], ['1', off(2)]]);
    for (const a of mine) assert.ok(a.term > Math.max(a.term_before, termsBefore.get(a.partition)!), `partition ${a.partition} leads at ${a.term}, above ${a.term_before} and ${termsBefore.get(a.partition)}`);
    assert.deepEqual(body.refused, []);

    await publish(broker.url, name, [eventIn('0', 'n0'), eventIn('1', 'n1'), eventIn('0', 'n2')]);
    const after = await readAll(broker.url, name, 9);
    assert.deepEqual(after.filter(([, o]) => !o.startsWith('n')), before, 'every event it held, in order, at its offsets');
    const fresh = after.filter(([, o]) => o.startsWith('n')).sort((x, y) => x[0].localeCompare(y[0]));
    assert.deepEqual(fresh, [[`0@${off(3)}`, 'n0'], [`0@${off(4)}`, 'n2'], [`1@${off(3)}`, 'n1']], 'new events follow at the next offsets');
    const v2 = (await call(broker.url, 'GET', '/cluster')).body as View;
    assert.deepEqual(v2.accepted_losses.filter((a) => a.event_type === name).map((a) => [a.partition, a.recorded]).sort(), [['0', true], ['1', true]], 'GET /cluster lists the accepted losses, recorded in the metadata');

    // The next start, without the flag, is a normal one: nothing is damaged any more.
    await closeAllStreams();
    await broker.close();
    broker = undefined;
    broker = await startTestBroker({}, dir);
    const v3 = (await call(broker.url, 'GET', '/cluster')).body as View;
    assert.deepEqual(
      v3.accepted_losses.map((a) => [a.scope, a.event_type ?? '', a.partition ?? '', a.recorded]).sort(),
      [['metadata', '', '', true], ['partition', name, '0', true], ['partition', name, '1', true]],
      'a restart keeps the record of every accepted loss',
    );
    assert.deepEqual(v3.accepted_losses, v2.accepted_losses, 'as it was');
    assert.equal(v3.accepted_losses_older, 0);
    await publish(broker.url, name, [eventIn('1', 'later')]);
    assert.equal((await readAll(broker.url, name, 10)).length, 10);
  } finally {
    await closeAllStreams();
    if (broker !== undefined) await broker.destroy();
    else rmSync(dir, { recursive: true, force: true });
  }
});
