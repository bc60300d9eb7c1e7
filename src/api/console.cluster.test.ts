// Goal: the console's cluster overview (issue 11) tells a person the truth about a real three-node
// cluster: every partition's leader, term and replicas as GET /cluster gives them; once a node is
// killed (kill -9), that node unreachable, the partitions that lost a replica under-replicated (on the
// page of the node that leads them) and among the problems everywhere, the "only problems" filter
// showing exactly those and staying on across the page's refreshes, and `brook cluster partitions
// --problems` (the real executable) listing the same partitions; once the node is back, no problem.
// Method: cluster/up 3 (three node processes, src/testing/local-cluster.ts), an event type with six
// partitions and events in each; the console of node 1 (and of node 2, which leads the other half of
// the partitions after the kill) in Debian's chromium driven headless by puppeteer-core. The page
// redraws from GET /cluster every 5 s and leaders move (elections, the leader balancer), so each check
// waits until the page and a fresh GET /cluster of the same node agree, then asserts what they say.
// Screenshots go to dist/test-output/console/. Skipped only when no chromium is installed.
// The fake-answer tests in console.http.test.ts and cli/cli.test.ts cover a leaderless partition,
// which a three-replica cluster with a majority alive does not produce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { launchBrowser, noChromium, screenshot, waitForView } from '../testing/browser.js';
import { LocalCluster } from '../testing/local-cluster.js';

type HTMLElement = { innerText: string; className: string; getAttribute(n: string): string | null; querySelectorAll(s: string): ArrayLike<HTMLElement> & Iterable<HTMLElement> };
type HTMLInputElement = { checked: boolean };

const cliJs = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');
const nodes = [1, 2, 3];
const eventType = 'c3.orders';
const partitionCount = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Partition {
  event_type: string;
  partition: string;
  leader: number | null;
  term: number | null;
  replicas: number[];
  under_replicated: boolean;
  incomplete_replicas: number[];
  replica_status: { node: number; applied_index: number | null; lag: number | null; in_sync: boolean; incomplete: boolean | null }[];
}
interface View {
  id: number;
  metadata: { leader: number | null; term: number };
  members: { id: number; reachable: boolean }[];
  partitions: Partition[];
  under_replicated_partitions: number;
  leaderless_partitions: number;
}

/** One row of the page's partitions table, as a person reads it. */
interface Row {
  key: string;
  leader: string;
  term: string;
  replicas: string;
  /** One line per replica: "3: not reporting, node unreachable". */
  replicaStatus: string;
  state: string;
  /** The badge of replicas still fetching the retained log before their snapshot, if any. */
  incomplete: string | null;
  problem: boolean;
}

/** What the page shows besides the rows. */
interface Shown {
  rows: Row[];
  nodeId: string;
  leader: string;
  term: string;
  members: string;
  reachability: string[];
  underReplicated: string;
  leaderless: string;
  onlyProblems: boolean;
}

async function view(cluster: LocalCluster, i: number): Promise<View | undefined> {
  try {
    const res = await fetch(`${cluster.url(i)}/cluster`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? ((await res.json()) as View) : undefined;
  } catch {
    return undefined;
  }
}

/** The state the console gives a partition from the answering node's GET /cluster. */
function stateOf(p: Partition, v: View): string {
  const down = new Set(v.members.filter((m) => !m.reachable).map((m) => m.id));
  if (p.leader === null) return 'leaderless';
  if (p.under_replicated) return 'under-replicated';
  if (p.replicas.some((n) => down.has(n))) return 'replica unreachable';
  return 'ok';
}

/** The page as it should be for the answer `v` (with the "only problems" filter on or off). */
function expected(v: View, onlyProblems: boolean): Shown {
  const rows = v.partitions
    .filter((p) => p.event_type === eventType)
    .map((p) => {
      const state = stateOf(p, v);
      const down = new Set(v.members.filter((m) => !m.reachable).map((m) => m.id));
      const replicaStatus = p.replica_status
        .map((r) => {
          const known = r.applied_index === null ? (r.in_sync ? 'not known here' : 'not reporting') : r.in_sync ? (r.lag ? `in sync (${r.lag} behind)` : 'in sync') : `behind by ${r.lag}`;
          const parts = [r.node === p.leader ? 'leader' : null, known, r.incomplete === true ? 'incomplete: fetching the retained log' : null, down.has(r.node) ? 'node unreachable' : null].filter((x) => x !== null);
          return `${r.node}${r.node === p.leader ? '★' : ''}: ${parts.join(', ')}`;
        })
        .join('\n');
      return { key: `${p.event_type}/${p.partition}`, leader: p.leader === null ? 'none' : String(p.leader), term: p.term === null ? '-' : String(p.term), replicas: p.replicas.join(', '), replicaStatus, state, incomplete: p.incomplete_replicas.length === 0 ? null : `incomplete: ${p.incomplete_replicas.join(', ')}`, problem: state !== 'ok' };
    });
  return {
    rows: onlyProblems ? rows.filter((r) => r.problem) : rows,
    nodeId: String(v.id),
    leader: v.metadata.leader === null ? 'none' : String(v.metadata.leader),
    term: String(v.metadata.term),
    members: `${v.members.filter((m) => m.reachable).length} of ${v.members.length} reachable`,
    reachability: v.members.map((m) => `${m.id}: ${m.reachable ? 'reachable' : 'unreachable'}`),
    underReplicated: String(v.under_replicated_partitions),
    leaderless: String(v.leaderless_partitions),
    onlyProblems,
  };
}

async function shown(page: Page): Promise<Shown> {
  const text = (sel: string) => page.$eval(sel, (el) => (el as unknown as HTMLElement).innerText);
  return {
    rows: await page.$$eval('[data-testid=partitions] tbody tr', (trs) =>
      trs.map((tr) => {
        const td = [...(tr as unknown as HTMLElement).querySelectorAll('td')].map((x) => x.innerText);
        const state = tr.querySelector('[data-testid=partition-state]')!.firstChild as unknown as HTMLElement;
        const incomplete = tr.querySelector('[data-testid=partition-incomplete]') as unknown as HTMLElement | null;
        return { key: tr.getAttribute('data-key') ?? '', leader: td[2]!, term: td[3]!, replicas: td[4]!, replicaStatus: td[5]!, state: state.innerText, incomplete: incomplete === null ? null : incomplete.innerText, problem: tr.className === 'problem' };
      }),
    ),
    nodeId: await text('[data-testid=node-id]'),
    leader: await text('[data-testid=leader]'),
    term: await text('[data-testid=term]'),
    members: await text('[data-testid=member-count]'),
    reachability: await page.$$eval('[data-testid=members] tbody tr', (trs) =>
      trs.map((tr) => {
        const td = [...(tr as unknown as HTMLElement).querySelectorAll('td')].map((x) => x.innerText);
        return `${td[0]!.replace(' (this node)', '')}: ${td[4]}`;
      }),
    ),
    underReplicated: await text('[data-testid=under-replicated]'),
    leaderless: await text('[data-testid=leaderless]'),
    onlyProblems: await page.$eval('[data-testid=only-problems]', (el) => (el as unknown as HTMLInputElement).checked),
  };
}

/**
 * Waits until a redraw of the page (after this call) shows what node i's GET /cluster says, and `ok`
 * holds of that answer; returns the answer. A failure shows the last page and answer side by side.
 */
async function agreed(cluster: LocalCluster, page: Page, i: number, what: string, ok: (v: View) => boolean, timeoutMs = 25_000): Promise<{ v: View; onPage: Shown }> {
  const from = Number(await page.$eval('[data-testid=cluster-overview]', (el) => el.getAttribute('data-draws')));
  const deadline = Date.now() + timeoutMs;
  let last: { page?: Shown; api?: Shown } = {};
  for (;;) {
    const draws = Number(await page.$eval('[data-testid=cluster-overview]', (el) => el.getAttribute('data-draws')));
    if (draws > from) {
      const before = await view(cluster, i);
      const onPage = await shown(page);
      const after = await view(cluster, i);
      // The same answer before and after reading the page: it did not change while the page was read.
      if (before !== undefined && after !== undefined) {
        const want = expected(after, onPage.onlyProblems);
        last = { page: onPage, api: want };
        if (JSON.stringify(expected(before, onPage.onlyProblems)) === JSON.stringify(want) && JSON.stringify(onPage) === JSON.stringify(want) && ok(after)) return { v: after, onPage };
      }
    }
    if (Date.now() > deadline) {
      assert.fail(`node ${i}'s page did not come to show ${what} within ${timeoutMs} ms\npage: ${JSON.stringify(last.page, null, 1)}\nGET /cluster: ${JSON.stringify(last.api, null, 1)}\n${cluster.logs(nodes)}`);
    }
    await sleep(250);
  }
}

async function openOverview(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push((e as Error).message));
  (page as Page & { errors: string[] }).errors = errors;
  await page.setViewport({ width: 1280, height: 1000 });
  await page.goto(url + '/console/');
  await waitForView(page);
  return page;
}

function brook(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env };
    delete env['BROOK_URL'];
    delete env['BROOK_TOKEN'];
    const p = spawn(process.execPath, [cliJs, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `brook --url <node i> cluster partitions --problems`, as rows [event type, partition, state], and its summary line. */
async function cliProblems(cluster: LocalCluster, i: number): Promise<{ rows: string[][]; inSync: string[]; summary: string }> {
  const r = await brook(['--url', cluster.url(i), 'cluster', 'partitions', '--problems']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^EVENT TYPE\s+PARTITION\s+LEADER\s+TERM\s+REPLICAS\s+IN SYNC\s+STATE$/);
  const rows = lines.slice(1).filter((l) => l.startsWith(eventType)).map((l) => l.split(/\s{2,}/));
  return { rows: rows.map((c) => [c[0]!, c[1]!, c[6]!]), inSync: rows.map((c) => c[5]!), summary: lines.find((l) => / partitions; node /.test(l)) ?? r.stdout };
}

test('the cluster overview of three real nodes: rows as GET /cluster says; a killed node unreachable, its partitions under-replicated and the only problems, as brook cluster partitions --problems lists them; all clear once it is back', { skip: noChromium, timeout: 150_000 }, async (t) => {
  const cluster = await LocalCluster.create('brook-console-cluster-test-', { BROOK_METADATA_TIMEOUT_MS: '2000' });
  t.after(() => cluster.destroy());
  const browser = await launchBrowser();
  t.after(() => browser.close());

  cluster.up(3);
  const stats = { default_statistic: { messages_per_minute: 1, message_size: 1, read_parallelism: partitionCount, write_parallelism: partitionCount } };
  await cluster.created(1, '/event-types', businessEventType(eventType, stats));
  // Data: events in every partition (random partitioning; 60 events in batches of 6 miss none in practice, and it is checked).
  for (let b = 0; b < 10; b++) {
    const r = await call(cluster.url(1 + (b % 3)), 'POST', `/event-types/${eventType}/events`, Array.from({ length: 6 }, (_, k) => businessEvent(`C3-${b}-${k}`)));
    assert.equal(r.status, 200, r.text);
  }
  const offsets = (await call(cluster.url(1), 'GET', `/event-types/${eventType}/partitions`)).body as { partition: string; newest_available_offset: string }[];
  assert.equal(offsets.length, partitionCount);
  assert.deepEqual(offsets.filter((p) => p.newest_available_offset === 'BEGIN'), [], 'events in every partition');

  // ---- all three up: every row is the API's, no problem.
  const page = await openOverview(browser, cluster.url(1));
  const healthy = (v: View) => v.members.every((m) => m.reachable) && v.partitions.filter((p) => p.event_type === eventType).length === partitionCount && v.partitions.every((p) => stateOf(p, v) === 'ok');
  const { v: before } = await agreed(cluster, page, 1, 'three reachable nodes and every partition led and in sync', healthy);
  assert.equal(before.id, 1);
  assert.deepEqual(before.partitions.filter((p) => p.event_type === eventType).map((p) => p.replicas.length), Array(partitionCount).fill(3), 'three replicas per partition');
  await page.click('[data-testid=only-problems]');
  assert.deepEqual(await page.$$eval('[data-testid=partitions] tbody tr', (trs) => trs.length), 0, 'no partition with a problem');
  await screenshot(page, 'cluster-real-three-nodes.png');

  // ---- node 3 killed: with the filter still on (the page redraws), the problems are those the API gives.
  cluster.kill9(3);
  const lost = (v: View) => v.partitions.filter((p) => p.event_type === eventType && p.replicas.includes(3));
  // Node 3 unreachable, every partition led by a live node, and each that lost a replica counted
  // under-replicated exactly where node n leads it (only its leader knows).
  const node3DownSeenBy = (n: number) => (v: View) => v.members.find((m) => m.id === 3)?.reachable === false && v.partitions.every((p) => p.leader !== null && p.leader !== 3) && lost(v).every((p) => p.under_replicated === (p.leader === n));
  const { v: down, onPage } = await agreed(cluster, page, 1, 'node 3 unreachable, and each partition that lost a replica under-replicated where node 1 leads it', node3DownSeenBy(1));
  assert.equal(await page.$eval('[data-testid=only-problems]', (el) => (el as unknown as HTMLInputElement).checked), true, 'the filter stayed on across the redraws');
  const problemKeys = onPage.rows.map((r) => r.key);
  assert.deepEqual(problemKeys, lost(down).map((p) => `${p.event_type}/${p.partition}`), 'the filter shows exactly the partitions with a replica on node 3');
  assert.equal(problemKeys.length, partitionCount);
  const ledBy1 = lost(down).filter((p) => p.leader === 1);
  assert.ok(ledBy1.length > 0, 'node 1 leads some of the partitions that lost a replica (else its page could not know they are under-replicated)');
  assert.deepEqual(
    onPage.rows.filter((r) => r.state === 'under-replicated').map((r) => r.key),
    ledBy1.map((p) => `${p.event_type}/${p.partition}`),
    'under-replicated: the partitions node 1 leads; the others show the unreachable replica',
  );
  assert.equal(down.under_replicated_partitions, ledBy1.length);
  // Each replica on node 3: the leader's page says it reports nothing; elsewhere it is not known here.
  for (const p of lost(down)) {
    const badge = onPage.rows.find((r) => r.key === `${eventType}/${p.partition}`)!.replicaStatus.split('\n').find((l) => l.startsWith('3'));
    assert.equal(badge, p.leader === 1 ? '3: not reporting, node unreachable' : '3: not known here, node unreachable', `partition ${p.partition}`);
  }
  await screenshot(page, 'cluster-real-node-down.png');
  // The page shows every partition again with the filter off, as the API lists them.
  await page.click('[data-testid=only-problems]');
  const keysAndReplicas = (rows: Row[]) => rows.map((r) => `${r.key} ${r.replicas}`);
  assert.deepEqual(keysAndReplicas((await shown(page)).rows), keysAndReplicas(expected((await view(cluster, 1))!, false).rows));

  // Node 2's page: the partitions node 2 leads are the under-replicated ones there.
  const page2 = await openOverview(browser, cluster.url(2));
  const { onPage: onPage2 } = await agreed(cluster, page2, 2, 'node 3 unreachable and the partitions node 2 leads under-replicated', node3DownSeenBy(2));
  assert.ok(onPage2.rows.some((r) => r.state === 'under-replicated'), 'node 2 leads some of them');
  await screenshot(page2, 'cluster-real-node-down-node2.png');
  await page2.close();
  // Between them, nodes 1 and 2 count every partition that lost a replica under-replicated: each on the
  // node leading it (read until both name the same leaders: the balancer may move one meanwhile).
  const both = await (async () => {
    for (const until = Date.now() + 20_000; ; await sleep(250)) {
      const [v1, v2] = await Promise.all([view(cluster, 1), view(cluster, 2)]);
      const leaders = (v: View | undefined) => JSON.stringify(v && lost(v).map((p) => p.leader));
      if (v1 !== undefined && v2 !== undefined && leaders(v1) === leaders(v2)) return [v1, v2] as const;
      assert.ok(Date.now() < until, 'nodes 1 and 2 name the same partition leaders');
    }
  })();
  for (const p of lost(both[0])) {
    assert.ok(p.leader === 1 || p.leader === 2, `${p.partition}: led by a live node`);
    assert.equal(lost(both[p.leader - 1]!).find((q) => q.partition === p.partition)?.under_replicated, true, `partition ${p.partition} is under-replicated on its leader, node ${p.leader}`);
  }

  // The tool, run as the real executable against node 1, lists the same partitions and states as the page.
  await page.click('[data-testid=only-problems]');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const cli = await cliProblems(cluster, 1);
    const onPage = (await shown(page)).rows.map((r) => [eventType, r.key.split('/')[1]!, r.state]);
    if (JSON.stringify(cli.rows) === JSON.stringify(onPage)) {
      assert.equal(cli.rows.length, partitionCount);
      // In sync: node 3 never, where node 1 leads (it reported nothing); "3?" (no figures here) elsewhere.
      cli.rows.forEach((r, k) => assert.equal(cli.inSync[k]!.split(',').includes('3'), false, `${r[1]}: ${cli.inSync[k]}`));
      assert.match(cli.summary, new RegExp(`^${partitionCount} of ${partitionCount} partitions; node 1 counts \\d+ under-replicated and 0 leaderless$`));
      break;
    }
    assert.ok(Date.now() < deadline, `brook cluster partitions --problems and the page disagree:\n${JSON.stringify(cli.rows)}\n${JSON.stringify(onPage)}`);
    await sleep(1000);
  }
  const status = await brook(['--url', cluster.url(1), 'cluster', 'status']);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^3\s+voter\s+\S+\s+\S+\s+NO/m, 'node 3 unreachable');
  assert.match(status.stdout, /PARTITIONS WITH A PROBLEM/);

  // ---- node 3 back: the problems clear on the page (filter on: no row) and in the tool.
  assert.match(cluster.up(3), /node 3: started/);
  await agreed(cluster, page, 1, 'three reachable nodes and no problem', healthy, 40_000);
  assert.equal((await shown(page)).rows.length, 0);
  // The tool runs a moment later: with node 3 back, the balancer hands its preferred partitions back to
  // it, and a partition is leaderless on node 1's view for the instant of a hand-over (seen once in a
  // quiet run: two partitions "leaderless" right after the page showed none). Asked again until clear.
  let after = await cliProblems(cluster, 1);
  for (const until = Date.now() + 20_000; after.rows.length > 0 && Date.now() < until; await sleep(250)) after = await cliProblems(cluster, 1);
  assert.deepEqual(after.rows, []);
  assert.match(after.summary, new RegExp(`^0 of ${partitionCount} partitions; node 1 counts 0 under-replicated and 0 leaderless$`));
  await page.click('[data-testid=only-problems]');
  await agreed(cluster, page, 1, 'every partition again, in sync', healthy);
  await screenshot(page, 'cluster-real-recovered.png');
  assert.deepEqual((page as Page & { errors: string[] }).errors, [], 'no script errors on the page');
  await page.close();
});
