// Goal: the `brook` command-line tool (issue 11) does what a person and a script expect against a real
// broker: tables for people, the API's JSON with --json, progress for long publishes, events streamed
// by tail (old ones with --from begin, new ones as they arrive), and a non-zero exit with the Problem's
// detail when the broker refuses. `brook start` runs a broker like `npm start`.
// Method: the real executable (dist/cli/main.js, the file package.json "bin" names; once through npx)
// as a child process, against a real broker on a temporary RocksDB (in this process, or started by
// `brook start` itself).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allScopes, tokenFile } from '../testing/auth-fixtures.js';
import { businessEvent, businessEventType, call, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { freePort } from '../testing/child-broker.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';

const cliJs = join(dirname(fileURLToPath(import.meta.url)), 'main.js');
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function brook(args: string[], o: { env?: Record<string, string>; input?: string; url?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, BROOK_URL: o.url ?? broker.url, ...o.env };
    delete env['BROOK_TOKEN'];
    if (o.env?.['BROOK_TOKEN'] !== undefined) env['BROOK_TOKEN'] = o.env['BROOK_TOKEN'];
    // Bounded: a command that hangs must fail its test, not keep this file's process alive (its pipes).
    const p = spawn(process.execPath, [cliJs, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(o.input ?? '');
  });
}

let broker: TestBroker;
let dir: string;

before(async () => {
  broker = await startTestBroker();
  dir = mkdtempSync(join(tmpdir(), 'brook-cli-'));
});
after(async () => {
  await broker.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

test('event-types create -f, list (table and --json), show with partitions and schema versions; a refusal exits 1 with the detail', async () => {
  const body = businessEventType('cli.orders', { default_statistic: { messages_per_minute: 1, message_size: 1, read_parallelism: 3, write_parallelism: 3 } });
  const created = await brook(['event-types', 'create', '-f', file('et.json', body)]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /created event type cli\.orders/);
  assert.equal((await call(broker.url, 'GET', '/event-types/cli.orders')).status, 200);

  const again = await brook(['event-types', 'create', '-f', file('et.json', body)]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^brook: 409 Conflict: .*cli\.orders/m);

  const invalid = await brook(['event-types', 'create', '-f', file('bad.json', businessEventType('cli.bad', { category: 'nope' }))]);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /422 Unprocessable Entity: .*category/);

  const list = await brook(['event-types', 'list']);
  assert.equal(list.code, 0, list.stderr);
  const header = list.stdout.split('\n')[0]!;
  assert.match(header, /^NAME\s+CATEGORY\s+OWNER/);
  assert.match(list.stdout, /^cli\.orders\s+business\s+test-app\s+random\s+forward\s+1\.0\.0/m);
  const asJson = JSON.parse((await brook(['--json', 'event-types', 'list', '--search', 'cli.'])).stdout) as { name: string }[];
  assert.deepEqual(asJson.map((e) => e.name), ['cli.orders']);

  const show = await brook(['event-types', 'show', 'cli.orders']);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^category:\s+business$/m);
  assert.match(show.stdout, /PARTITIONS\nPARTITION\s+OLDEST OFFSET\s+NEWEST OFFSET\n0\s+BEGIN\s+BEGIN\n1\s+BEGIN\s+BEGIN\n2\s+BEGIN\s+BEGIN\n/);
  assert.match(show.stdout, /SCHEMA VERSIONS \(newest first\)\nVERSION\s+CREATED\n1\.0\.0\s/);

  // Its partitions in the cluster view: leader, term, replicas, which are in sync, state; and the counts.
  type Part = { event_type: string; partition: string; leader: number | null; term: number | null; replicas: number[]; under_replicated: boolean };
  const view = (await call(broker.url, 'GET', '/cluster')).body as { partitions: Part[]; under_replicated_partitions: number; leaderless_partitions: number };
  const mine = view.partitions.filter((p) => p.event_type === 'cli.orders');
  assert.equal(mine.length, 3);
  const parts = await brook(['cluster', 'partitions', '--event-type', 'cli.orders']);
  assert.equal(parts.code, 0, parts.stderr);
  assert.match(parts.stdout, /^EVENT TYPE\s+PARTITION\s+LEADER\s+TERM\s+REPLICAS\s+IN SYNC\s+STATE$/m);
  for (const p of mine) {
    const state = p.leader === null ? 'leaderless' : p.under_replicated ? 'under-replicated' : 'ok';
    assert.match(parts.stdout, new RegExp(`^cli\\.orders\\s+${p.partition}\\s+${p.leader ?? 'none'}\\s+${p.term}\\s+${p.replicas.join(',')}\\s+${p.replicas.join(',')}\\s+${state}$`, 'm'));
  }
  assert.match(parts.stdout, new RegExp(`^3 of ${view.partitions.length} partitions; node 1 counts ${view.under_replicated_partitions} under-replicated and ${view.leaderless_partitions} leaderless$`, 'm'));
  assert.deepEqual((JSON.parse((await brook(['--json', 'cluster', 'partitions', '-e', 'cli.orders'])).stdout) as Part[]).map((p) => p.partition), mine.map((p) => p.partition));
  assert.match((await brook(['cluster', 'status'])).stdout, new RegExp(`^partitions:\\s+${view.partitions.length} \\(${view.under_replicated_partitions} under-replicated, ${view.leaderless_partitions} leaderless\\)$`, 'm'));

  const unknown = await brook(['event-types', 'show', 'cli.none']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /404 Not Found: .*cli\.none/);
});

test('cluster status and partitions of three nodes, one unreachable (reached with --url, which wins over BROOK_URL): leaderless, under-replicated and unreachable replicas are the problems', async () => {
  // A cluster's troubles cannot be made on one broker: a stand-in node answers GET /cluster with the
  // real broker's answer, members and partitions of a three-node cluster in trouble put in (as the
  // console's browser test does). BROOK_URL still names the real broker, where every partition is fine.
  // A real node killed in a real cluster: console.cluster.test.ts (this one also has a leaderless partition).
  const real = (await call(broker.url, 'GET', '/cluster')).body as Record<string, unknown> & { members: Record<string, unknown>[] };
  const rs = (node: number, applied: number | null, lag: number | null, inSync: boolean) => ({ node, role: 'voter', commit_index: applied, applied_index: applied, lag, in_sync: inSync });
  const part = (partition: string, leader: number | null, replicas: number[], status: ReturnType<typeof rs>[], underReplicated: boolean) => ({
    event_type: 'c3.orders', partition, topic: 9, group: 90 + Number(partition), leader, term: leader === null ? 4 : 3, preferred_leader: replicas[0], replicas, learners: [],
    commit_index: 120, applied_index: 100, lag: 20, under_replicated: underReplicated, replica_status: status,
  });
  const view = {
    ...real,
    id: 1,
    members: [
      { ...real.members[0], id: 1, self: true, reachable: true },
      { id: 2, self: false, suffrage: 'voter', raft_address: '10.0.0.2:9080', http_address: '10.0.0.2:8080', reachable: true },
      { id: 3, self: false, suffrage: 'voter', raft_address: '10.0.0.3:9080', http_address: '10.0.0.3:8080', reachable: false },
    ],
    partitions: [
      part('0', 1, [1, 2, 3], [rs(1, 120, 0, true), rs(2, 120, 0, true), rs(3, 100, 20, true)], false), // 3 unreachable, not yet out of sync
      part('1', 1, [1, 2], [rs(1, 120, 0, true), rs(2, 10, 1110, false)], true), // 2 behind by more than the limit
      part('2', null, [2, 3], [rs(2, null, null, true), rs(3, null, null, true)], false), // no leader known
      part('3', 2, [2, 1], [rs(2, null, null, true), rs(1, 120, 0, true)], false), // led elsewhere: 2 is not known here
    ],
    under_replicated_partitions: 1,
    leaderless_partitions: 1,
  };
  const asked: string[] = [];
  const standIn = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (req.method === 'GET' && req.url === '/cluster') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(view));
    else res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'stand-in' }));
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  try {
    const status = await brook(['--url', url, 'cluster', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(asked, ['GET /cluster'], '--url wins over BROOK_URL');
    assert.match(status.stdout, /^partitions:\s+4 \(1 under-replicated, 1 leaderless\)$/m);
    assert.match(status.stdout, /^3\s+voter\s+10\.0\.0\.3:8080\s+10\.0\.0\.3:9080\s+NO$/m);
    const problems = status.stdout.split('PARTITIONS WITH A PROBLEM (all: brook cluster partitions)\n')[1];
    assert.ok(problems !== undefined, `no problem section: ${status.stdout}`);
    const rows = problems.trim().split('\n');
    assert.match(rows[0]!, /^EVENT TYPE\s+PARTITION\s+LEADER\s+TERM\s+REPLICAS\s+IN SYNC\s+STATE$/);
    // In sync: the replicas the leader counts in sync; "N?" where this node has no figures (it does not lead).
    assert.deepEqual(rows.slice(1).map((r) => r.split(/\s{2,}/)), [
      ['c3.orders', '0', '1', '3', '1,2,3', '1,2,3', 'replica unreachable'],
      ['c3.orders', '1', '1', '3', '1,2', '1', 'under-replicated'],
      ['c3.orders', '2', 'none', '4', '2,3', '2?,3?', 'leaderless'],
    ]);

    const all = await brook(['--url', url, 'cluster', 'partitions']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^c3\.orders\s+3\s+2\s+3\s+2,1\s+2\?,1\s+ok$/m);
    assert.match(all.stdout, /^4 of 4 partitions; node 1 counts 1 under-replicated and 1 leaderless$/m);
    assert.match(all.stdout, /^N\? in sync: node 1 does not lead that partition/m);
    const only = await brook(['--url', url, 'cluster', 'partitions', '--problems']);
    assert.match(only.stdout, /^3 of 4 partitions;/m);
    assert.doesNotMatch(only.stdout, /^c3\.orders\s+3\s/m);
    const json = JSON.parse((await brook(['--url', url, '--json', 'cluster', 'partitions', '--problems'])).stdout) as { partition: string }[];
    assert.deepEqual(json.map((p) => p.partition), ['0', '1', '2']);
    const statusJson = JSON.parse((await brook(['--url', url, '--json', 'cluster', 'status'])).stdout) as unknown;
    assert.deepEqual(statusJson, view, '--json prints the API answer as it came');

    // A replica move in flight on the healthy partition: its state says so, and it is no problem.
    Object.assign(view.partitions[3]!, { learners: [4], moving: { from: 2, to: 4 } });
    const moving = await brook(['--url', url, 'cluster', 'partitions']);
    assert.match(moving.stdout, /^c3\.orders\s+3\s+2\s+3\s+2,1\s+2\?,1\s+moving 2->4$/m);
    assert.deepEqual((JSON.parse((await brook(['--url', url, '--json', 'cluster', 'partitions'])).stdout) as { moving: unknown }[]).map((p) => p.moving), [undefined, undefined, undefined, { from: 2, to: 4 }]);
    const problemsWhileMoving = await brook(['--url', url, 'cluster', 'partitions', '--problems']);
    assert.match(problemsWhileMoving.stdout, /^3 of 4 partitions;/m, 'a move is not a problem');
    assert.doesNotMatch((await brook(['--url', url, 'cluster', 'status'])).stdout, /^c3\.orders\s+3\s/m);

    // Replicas still fetching the retained log before their snapshot: the state names them, the status
    // counts the partitions; no problem by itself.
    Object.assign(view.partitions[3]!, { incomplete_replicas: [1] });
    Object.assign(view.partitions[1]!, { incomplete_replicas: [2] });
    Object.assign(view, { incomplete_partitions: 2 });
    const incomplete = await brook(['--url', url, 'cluster', 'partitions']);
    assert.match(incomplete.stdout, /^c3\.orders\s+3\s+2\s+3\s+2,1\s+2\?,1\s+moving 2->4, incomplete 1$/m);
    assert.match(incomplete.stdout, /^c3\.orders\s+1\s+1\s+3\s+1,2\s+1\s+under-replicated, incomplete 2$/m);
    assert.match((await brook(['--url', url, 'cluster', 'partitions', '--problems'])).stdout, /^3 of 4 partitions;/m, 'an incomplete replica is not a problem');
    assert.match((await brook(['--url', url, 'cluster', 'status'])).stdout, /^partitions:\s+4 \(1 under-replicated, 1 leaderless, 2 with an incomplete replica\)$/m);

    // Members of wiped directories (incarnation * 2^31 + node): they read as node.incarnation, and a
    // replica on the unreachable node 3 is a problem whatever its incarnation.
    const m3 = 17 * 2 ** 31 + 3;
    const m2 = 5 * 2 ** 31 + 2;
    const wrs = (member: number) => ({ ...rs(member % 2 ** 31, 120, 0, true), member, incarnation: Math.floor(member / 2 ** 31) });
    view.partitions.push(
      { ...part('4', 1, [1, m3], [], false), replica_status: [wrs(1), wrs(m3)] } as unknown as (typeof view.partitions)[number],
      { ...part('5', m2, [m2, 1], [], false), replica_status: [wrs(m2), wrs(1)] } as unknown as (typeof view.partitions)[number],
    );
    const wiped = await brook(['--url', url, 'cluster', 'partitions']);
    assert.match(wiped.stdout, /^c3\.orders\s+4\s+1\s+3\s+1,3\.17\s+1,3\.17\s+replica unreachable$/m);
    assert.match(wiped.stdout, /^c3\.orders\s+5\s+2\.5\s+3\s+2\.5,1\s+2\.5,1\s+ok$/m);

    // Losses accepted by operators, as the metadata records them (and one this node has not recorded yet).
    const loss = { scope: 'partition', node: 2, event_type: 'c3.orders', partition: '1', group: 91, at: '2026-11-27T16:00:00.000Z', kept: { newest_offset: '001-0001-000000000004', last_index: 9 }, damage: { index: 12, term: 3, reason: 'lost' }, term_before: 3, term: 8 };
    Object.assign(view, {
      accepted_losses: [
        { ...loss, id: 'a', scope: 'metadata', node: 1, group: 0, event_type: undefined, partition: undefined, kept: { last_index: 40 }, recorded: true },
        { ...loss, id: 'b', recorded: true },
        { ...loss, id: 'c', node: 1, partition: '2', group: 92, recorded: false },
      ],
      accepted_losses_older: 7,
    });
    const lost = (await brook(['--url', url, 'cluster', 'status'])).stdout;
    assert.match(lost, /^DATA LOSS ACCEPTED BY OPERATORS \(and 7 older ones, no longer listed\)$/m);
    assert.match(lost, /^metadata\s+0\s+1\s+2026-11-27T16:00:00\.000Z\s+8\s+yes$/m);
    assert.match(lost, /^c3\.orders 1\s+91\s+2\s+2026-11-27T16:00:00\.000Z\s+001-0001-000000000004\s+8\s+yes$/m);
    assert.match(lost, /^c3\.orders 2\s+92\s+1\s+.*NOT YET$/m);
  } finally {
    await new Promise((resolve) => standIn.close(resolve));
  }
});

test('publish from standard input (NDJSON) and from a file in batches with progress; a rejected batch exits 1 naming each failed event', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.pub'));
  const ndjson = ['{"order_number":"N-1"}', '{"order_number":"N-2"}'].join('\n');
  const fromStdin = await brook(['publish', 'cli.pub', '--add-metadata'], { input: ndjson });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.match(fromStdin.stdout, /published 2 events to cli\.pub/);

  const events = Array.from({ length: 7 }, (_, i) => businessEvent(`F-${i}`));
  const fromFile = await brook(['publish', 'cli.pub', '-f', file('events.json', events), '--batch-size', '3', '--progress']);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.deepEqual(fromFile.stderr.trim().split('\n'), ['published 3/7 events (42%)', 'published 6/7 events (85%)', 'published 7/7 events (100%)']);
  const parts = (await call(broker.url, 'GET', '/event-types/cli.pub/partitions')).body as { newest_available_offset: string }[];
  assert.match(parts[0]!.newest_available_offset, /-000000000000000008$/, 'nine events stored');

  const bad = await brook(['publish', 'cli.pub', '--add-metadata'], { input: JSON.stringify([{ order_number: 'ok' }, { amount: 3 }]) });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /422: the batch was rejected/);
  assert.match(bad.stderr, /event 1 \([0-9a-f-]{36}\): failed at validating: .*order_number/);
  assert.match(bad.stderr, /event 0 \([0-9a-f-]{36}\): aborted/);

  const json = await brook(['--json', 'publish', 'cli.pub'], { input: JSON.stringify(businessEvent('J-1')) });
  assert.deepEqual(JSON.parse(json.stdout), { published: 1 });
});

test('tail --from begin prints the stored events; tail (from the end) prints an event published while it runs, and Ctrl-C ends it with 0', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.tail'));
  await call(broker.url, 'POST', '/event-types/cli.tail/events', [businessEvent('T-1'), businessEvent('T-2')]);
  const old = await brook(['tail', 'cli.tail', '--from', 'begin', '--limit', '2']);
  assert.equal(old.code, 0, old.stderr);
  const lines = old.stdout.trim().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^\[partition 0\] \{"order_number":"T-1","metadata":\{/);
  assert.match(lines[1]!, /"order_number":"T-2"/);

  const p = spawn(process.execPath, [cliJs, '--json', 'tail', 'cli.tail'], { env: { ...process.env, BROOK_URL: broker.url }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, killSignal: 'SIGKILL' });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => p.on('close', (code) => resolve(code)));
  try {
    // The stream is open once the low-level stream gauge says so.
    const deadline = Date.now() + 10_000;
    while (((await call(broker.url, 'GET', '/metrics')).body as { gauges: Record<string, { value: number }> }).gauges['brook.streams.open.low_level']?.value !== 1) {
      assert.ok(Date.now() < deadline, 'tail did not open its stream');
      await new Promise((r) => setTimeout(r, 50));
    }
    await call(broker.url, 'POST', '/event-types/cli.tail/events', [businessEvent('LIVE-1')]);
    while (!out.includes('LIVE-1')) {
      assert.ok(Date.now() < deadline, `the live event did not appear: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(!out.includes('T-1'), 'from the end: old events are not shown');
    assert.equal((JSON.parse(out.trim()) as { order_number: string }).order_number, 'LIVE-1', '--json prints the event itself');
    p.kill('SIGINT');
    assert.equal(await exited, 0);
  } finally {
    // A failed check must not leave tail running: its pipes would keep this file's process alive.
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }
});

test('subscriptions list and lag: per-partition lag, state, owning stream and total', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.sub', { default_statistic: { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 } }));
  await call(broker.url, 'POST', '/event-types/cli.sub/events', [businessEvent('S-1'), businessEvent('S-2'), businessEvent('S-3'), businessEvent('S-4')]);
  const sub = (await call(broker.url, 'POST', '/subscriptions', { owning_application: 'cli-app', event_types: ['cli.sub'], read_from: 'begin' })).body as { id: string };
  const list = await brook(['subscriptions', 'list', '--owning-application', 'cli-app']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^${sub.id}\\s+cli-app\\s+cli\\.sub\\s+default\\s+begin`, 'm'));

  // Before a stream read them, the broker does not know the lag: the tool says so instead of printing 0.
  const before = await brook(['subscriptions', 'lag', sub.id]);
  assert.match(before.stdout, /total lag: 0 events \(not known for 2 partitions that no stream has read yet\)/);

  // A stream that received one batch and committed nothing: the lag is known, and the stream owns the partitions.
  const s = await SubscriptionStreamClient.open(broker.url, sub.id, 'batch_limit=1&max_uncommitted_events=1&batch_flush_timeout=1');
  try {
    await s.waitFor((x) => x.events().length >= 1);
    const stats = (await call(broker.url, 'GET', `/subscriptions/${sub.id}/stats`)).body as { items: { partitions: { partition: string; unconsumed_events?: number; stream_id?: string }[] }[] };
    const lag = await brook(['subscriptions', 'lag', sub.id]);
    assert.equal(lag.code, 0, lag.stderr);
    let total = 0;
    for (const p of stats.items[0]!.partitions) {
      assert.equal(p.stream_id, s.streamId);
      total += p.unconsumed_events ?? 0;
      assert.match(lag.stdout, new RegExp(`^cli\\.sub\\s+${p.partition}\\s+${p.unconsumed_events ?? '-'}\\s+assigned\\s+${s.streamId}$`, 'm'));
    }
    assert.equal(total, 4, 'nothing committed: every event is unconsumed');
    assert.match(lag.stdout, /^total lag: 4 events$/m);
    assert.deepEqual(JSON.parse((await brook(['--json', 'subscriptions', 'lag', sub.id])).stdout), stats);
  } finally {
    await s.close();
  }
  assert.match((await brook(['subscriptions', 'lag', '00000000-0000-4000-8000-000000000000'])).stderr, /404 Not Found/);
});

test('settings: feature toggles, the blacklist, storages and timelines', async () => {
  const off = await brook(['settings', 'feature', 'check_partitions_keys', 'off']);
  assert.equal(off.code, 0, off.stderr);
  assert.match((await brook(['settings', 'features'])).stdout, /^check_partitions_keys\s+off$/m);
  assert.equal((await brook(['settings', 'feature', 'check_partitions_keys', 'on'])).code, 0);
  assert.match((await brook(['settings', 'features'])).stdout, /^check_partitions_keys\s+on$/m);
  const unknownFeature = await brook(['settings', 'feature', 'no_such', 'on']);
  assert.equal(unknownFeature.code, 1);
  assert.match(unknownFeature.stderr, /400 Bad Request: .*no_such/);

  assert.equal((await brook(['settings', 'blacklist', 'add', 'PRODUCER_APP', 'noisy-app'])).code, 0);
  assert.match((await brook(['settings', 'blacklist'])).stdout, /^PRODUCER_APP\s+noisy-app$/m);
  assert.deepEqual(((await call(broker.url, 'GET', '/settings/blacklist')).body as { producers: { apps: string[] } }).producers.apps, ['noisy-app']);
  assert.equal((await brook(['settings', 'blacklist', 'remove', 'PRODUCER_APP', 'noisy-app'])).code, 0);
  assert.doesNotMatch((await brook(['settings', 'blacklist', 'show'])).stdout, /noisy-app/);
  const badType = await brook(['settings', 'blacklist', 'add', 'NOPE', 'x']);
  assert.notEqual(badType.code, 0);
  assert.match(badType.stderr, /Allowed choices are CONSUMER_APP/);

  assert.match((await brook(['settings', 'storages'])).stdout, /^default\s+broker\s+\{\}$/m);
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.tl'));
  assert.equal((await brook(['settings', 'timelines', 'cli.tl'])).stdout.trim(), 'ORDER  ID  STORAGE  CREATED  SWITCHED');
});

test('with authentication on: no token exits 1 with the 401 detail; --token and BROOK_TOKEN are sent', async () => {
  const b = await startTestBroker({ auth: 'static', authTokensFile: tokenFile({ 'tok-cli': { uid: 'brook-admin', scopes: allScopes } }) });
  try {
    const denied = await brook(['event-types', 'list'], { url: b.url });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /^brook: 401 Unauthorized/);
    assert.equal((await brook(['--token', 'tok-cli', 'event-types', 'list'], { url: b.url })).code, 0);
    assert.equal((await brook(['cluster', 'status'], { url: b.url, env: { BROOK_TOKEN: 'tok-cli' } })).code, 0);
  } finally {
    await b.destroy();
  }
});

test('an unreachable node and a usage error exit non-zero with a message', async () => {
  const port = await freePort();
  const down = await brook(['cluster', 'status'], { url: `http://127.0.0.1:${port}` });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  const usage = await brook(['tail']);
  assert.notEqual(usage.code, 0);
  assert.match(usage.stderr, /missing required argument 'event-type'/);
});

test('brook start runs a broker with the flags of npm start; cluster status shows it; SIGTERM stops it cleanly', async () => {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'brook-cli-start-'));
  const p = spawn(process.execPath, [cliJs, 'start', '--port', String(port), '--host', '127.0.0.1', '--data-dir', data, '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, killSignal: 'SIGKILL' });
  let output = '';
  p.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  p.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => p.on('close', (code) => resolve(code)));
  try {
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await fetch(url + '/health', { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) break;
      assert.ok(Date.now() < deadline && p.exitCode === null, `broker did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const status = await brook(['cluster', 'status'], { url });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^node:\s+1 \(leader\)$/m);
    assert.match(status.stdout, /^metadata leader:\s+1$/m);
    assert.match(status.stdout, /^1\*\s+voter\s+.*yes\s+leader$/m);
    const view = JSON.parse((await brook(['--json', 'cluster', 'status'], { url })).stdout) as { id: number; metadata: { leader: number } };
    assert.deepEqual([view.id, view.metadata.leader], [1, 1]);
  } finally {
    p.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    rmSync(data, { recursive: true, force: true });
  }
});

test('npx brook runs the executable package.json names', async () => {
  const r = await new Promise<Run>((resolve) => {
    const p = spawn('npx', ['--no-install', 'brook', '--version'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '0.1.0');
});

test('cluster move and cancel-move find the partition\'s group and exit 1 with the Problem detail when refused', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.moves'));
  const json = JSON.parse((await brook(['--json', 'cluster', 'partitions', '-e', 'cli.moves'])).stdout) as { group: number; moving: unknown }[];
  assert.ok(json.length > 0 && json.every((p) => p.moving === null));
  const refused = await brook(['cluster', 'move', 'cli.moves', '0', '--from', '1', '--to', '7']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /422.*Node 7 is not a member of this cluster/);
  const byGroup = await brook(['cluster', 'move', 'x', 'y', '--group', String(json[0]!.group), '--from', '1', '--to', '7']);
  assert.match(byGroup.stderr, /422.*Node 7 is not a member/, '--group addresses the group directly');
  const nothing = await brook(['cluster', 'cancel-move', 'cli.moves', '0']);
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /409.*no move in flight/);
  const none = await brook(['cluster', 'move', 'cli.none', '0', '--from', '1', '--to', '2']);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no partition 0 of cli\.none/);
});

test('cluster accept-loss wants --i-accept-data-loss, finds the partition\'s group and exits 1 with the Problem detail when refused', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('cli.losses'));
  const unsure = await brook(['cluster', 'accept-loss', 'cli.losses', '0']);
  assert.equal(unsure.code, 1);
  assert.match(unsure.stderr, /--i-accept-data-loss/);
  // The replica opens in the background after the creation; until then the refusal says it is not open.
  let refused = await brook(['cluster', 'accept-loss', 'cli.losses', '0', '--i-accept-data-loss']);
  for (let i = 0; i < 50 && /not open/.test(refused.stderr); i++) {
    await new Promise((r) => setTimeout(r, 100));
    refused = await brook(['cluster', 'accept-loss', 'cli.losses', '0', '--i-accept-data-loss']);
  }
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /409.*is not damaged/);
  // --replica goes to the route (a partition of several damaged replicas names the one that keeps its log).
  const named = await brook(['cluster', 'accept-loss', 'cli.losses', '0', '--i-accept-data-loss', '--replica', '9']);
  assert.equal(named.code, 1);
  assert.match(named.stderr, /409.*Node 9 holds no replica/);
  assert.match((await brook(['cluster', 'accept-loss', '--all', '--replica', '9', '--i-accept-data-loss'])).stderr, /--all takes no partition and no --replica/);
  const all = await brook(['cluster', 'accept-loss', '--all', '--i-accept-data-loss']);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /no partition of this node had its only replica damaged/);
});
