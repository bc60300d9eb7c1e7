#!/usr/bin/env node
/**
 * `brook`: the command-line tool (package.json "bin"; `npx brook ...` from a checkout). It talks to
 * any node over the same HTTP API as every client (`--url` or BROOK_URL, a bearer token from
 * `--token` or BROOK_TOKEN), prints tables for people and the API's JSON with `--json`, and exits
 * non-zero with the Problem's detail when the broker refuses. `brook start` runs the broker itself
 * with the same configuration as `npm start` (flags, BROOK_* environment, --config file).
 *
 * The argument parser is commander (docs/decisions.md says why).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { BrookClient, CliError, errorOf } from './client.js';
import { fields, json, table } from './format.js';
import { memberLabel, nodeOfMember } from '../core/member-id.js';

interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
}

type Out = { write(s: string): unknown };

const enc = encodeURIComponent;

/** Reads a file, or standard input for "-" or no file. */
function readInput(file: string | undefined): string {
  return readFileSync(file === undefined || file === '-' ? 0 : file, 'utf8');
}

/** Events from a JSON array, a single JSON object, or NDJSON (one event per line). */
export function parseEvents(text: string): unknown[] {
  const t = text.trim();
  if (t === '') return [];
  if (t.startsWith('[')) {
    const parsed = JSON.parse(t) as unknown;
    if (!Array.isArray(parsed)) throw new CliError('expected a JSON array of events');
    return parsed;
  }
  try {
    return [JSON.parse(t)];
  } catch {
    return t
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .map((l, i) => {
        try {
          return JSON.parse(l) as unknown;
        } catch (err) {
          throw new CliError(`line ${i + 1} is not JSON: ${(err as Error).message}`);
        }
      });
  }
}

/** Adds metadata.eid and metadata.occurred_at where absent (for hand-written test events). */
function withMetadata(e: unknown): unknown {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return e;
  const o = e as Record<string, unknown>;
  const m = typeof o['metadata'] === 'object' && o['metadata'] !== null ? { ...(o['metadata'] as Record<string, unknown>) } : {};
  m['eid'] ??= randomUUID();
  m['occurred_at'] ??= new Date().toISOString();
  return { ...o, metadata: m };
}

type Member = { id: number; reachable: boolean };
type PartitionStatus = {
  event_type: string;
  partition: string;
  group: number;
  topic: number;
  /** The replica move in flight (absent from nodes of a version without moves). */
  moving?: { from: number; to: number } | null;
  leader: number | null;
  term: number | null;
  replicas: number[];
  under_replicated: boolean;
  /** Replicas still fetching the retained log before their snapshot (absent from nodes of an earlier version). */
  incomplete_replicas?: number[];
  /** `member` is absent from nodes of an earlier version, whose `node` was the member id. */
  replica_status: { node: number; member?: number; applied_index: number | null; lag: number | null; in_sync: boolean }[];
};
type PartitionsView = { partitions?: PartitionStatus[]; under_replicated_partitions?: number; leaderless_partitions?: number; incomplete_partitions?: number };

/** As the console says it: leaderless, under-replicated (the broker's count), or a replica on a member this node cannot reach. */
function partitionProblem(p: PartitionStatus, members: Member[]): string | undefined {
  if (p.leader === null) return 'leaderless';
  if (p.under_replicated) return 'under-replicated';
  if (p.replicas.some((n) => members.find((m) => m.id === nodeOfMember(n))?.reachable === false)) return 'replica unreachable';
  return undefined;
}

/**
 * The problem if any; otherwise a replica move in flight (no problem by itself, as on the console), or
 * ok; then the replicas still fetching the retained log before their snapshot (no problem either).
 */
function partitionState(p: PartitionStatus, members: Member[]): string {
  const state = partitionProblem(p, members) ?? (p.moving != null ? `moving ${memberLabel(p.moving.from)}->${memberLabel(p.moving.to)}` : 'ok');
  const incomplete = p.incomplete_replicas ?? [];
  return incomplete.length === 0 ? state : `${state}, incomplete ${incomplete.map(memberLabel).join(',')}`;
}

function partitionTable(list: PartitionStatus[], members: Member[]): string {
  // A replica this node has no figures for (it does not lead the group) is "?" rather than in sync; one
  // that reported nothing to the leader (down, unreachable) is not in sync and not listed.
  // Members read as node ids, "3.17" for incarnation 17 of node 3 (a data directory that replaced a wiped one).
  const replica = (r: PartitionStatus['replica_status'][number]) => {
    const m = memberLabel(r.member ?? r.node);
    return r.applied_index === null ? `${m}?` : r.in_sync ? m : `${m}(-${r.lag})`;
  };
  return table(
    ['event type', 'partition', 'leader', 'term', 'replicas', 'in sync', 'state'],
    list.map((p) => [p.event_type, p.partition, p.leader === null ? 'none' : memberLabel(p.leader), p.term, p.replicas.map(memberLabel).join(','), p.replica_status.filter((r) => r.in_sync).map(replica).join(','), partitionState(p, members)]),
  );
}

export function buildProgram(out: Out = process.stdout, err: Out = process.stderr): Command {
  const program = new Command('brook');
  program
    .description('Brook, a clustered HTTP publish/subscribe event broker: run a node, or talk to one')
    .version(packageVersion())
    .addOption(new Option('--url <url>', 'any node of the cluster').env('BROOK_URL').default('http://localhost:8080'))
    .addOption(new Option('--token <token>', 'bearer token, when authentication is on').env('BROOK_TOKEN'))
    .option('--json', 'print the API JSON instead of tables (for scripts)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => out.write(s), writeErr: (s) => err.write(s) });

  const g = (): GlobalOptions => program.opts<GlobalOptions>();
  const client = () => new BrookClient({ url: g().url, token: g().token });
  const print = (value: unknown, human: () => string) => out.write(g().json === true ? json(value) : human());

  program
    .command('start')
    .description('run a broker node here, configured as `npm start` (flags, BROOK_* environment, --config file)')
    .allowUnknownOption()
    .helpOption(false)
    .argument('[flags...]', 'broker flags, e.g. --port 8080 --data-dir ./data')
    .action(async (flags: string[]) => {
      const mainJs = fileURLToPath(new URL('../main.js', import.meta.url));
      const child = spawn(process.execPath, [mainJs, ...flags], { stdio: 'inherit' });
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
      const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s === 'SIGINT' || s === 'SIGTERM' ? 0 : 1))));
      process.exitCode = code;
    });

  // ------------------------------------------------------------------ cluster
  const cluster = program.command('cluster').description('the cluster as the node at --url sees it');
  cluster
    .command('status')
    .description('members, reachability, metadata leader and term')
    .action(async () => {
      type View = {
        id: number;
        role: string;
        members: { id: number; self: boolean; suffrage: string; raft_address: string | null; http_address: string | null; reachable: boolean }[];
        metadata: { leader: number | null; term: number; commit_index: number; applied_index: number };
        accepted_losses?: { scope?: string; node?: number; event_type?: string; partition?: string; group: number; at: string; kept: { newest_offset?: string }; term: number; recorded?: boolean }[];
        accepted_losses_older?: number;
      };
      const v = await client().get<View & Partial<PartitionsView>>('/cluster');
      const problems = (v.partitions ?? []).filter((p) => partitionProblem(p, v.members) !== undefined);
      print(v, () =>
        fields([
          ['node', `${v.id} (${v.role})`],
          ['metadata leader', v.metadata.leader],
          ['term', v.metadata.term],
          ['commit / applied', `${v.metadata.commit_index} / ${v.metadata.applied_index}`],
          ...(v.partitions === undefined
            ? []
            : ([['partitions', `${v.partitions.length} (${v.under_replicated_partitions ?? 0} under-replicated, ${v.leaderless_partitions ?? 0} leaderless${(v.incomplete_partitions ?? 0) > 0 ? `, ${v.incomplete_partitions} with an incomplete replica` : ''})`]] as [string, string][])),
        ]) +
          '\n' +
          table(
            ['id', 'suffrage', 'http', 'raft', 'reachable', 'leader'],
            v.members.map((m) => [m.self ? `${m.id}*` : String(m.id), m.suffrage, m.http_address, m.raft_address, m.reachable ? 'yes' : 'NO', m.id === v.metadata.leader ? 'leader' : '']),
          ) +
          (problems.length === 0 ? '' : `\nPARTITIONS WITH A PROBLEM (all: brook cluster partitions)\n${partitionTable(problems, v.members)}`) +
          ((v.accepted_losses ?? []).length === 0
            ? ''
            : `\nDATA LOSS ACCEPTED BY OPERATORS${(v.accepted_losses_older ?? 0) > 0 ? ` (and ${v.accepted_losses_older} older ones, no longer listed)` : ''}\n` +
              table(
                ['what', 'group', 'node', 'at', 'kept up to offset', 'leads at term', 'recorded'],
                v.accepted_losses!.map((l) => [l.scope === 'metadata' ? 'metadata' : `${l.event_type} ${l.partition}`, String(l.group), l.node === undefined ? '' : String(l.node), l.at, l.kept.newest_offset ?? '', String(l.term), l.recorded === false ? 'NOT YET' : 'yes']),
              )),
      );
    });
  cluster
    .command('partitions')
    .description('every partition: leader, term, replicas, which are in sync, and its state')
    .option('-e, --event-type <name>', 'only the partitions of this event type')
    .option('--problems', 'only leaderless and under-replicated partitions, and those with a replica on an unreachable node')
    .action(async (o: { eventType?: string; problems?: boolean }) => {
      const v = await client().get<{ id: number; members: Member[] } & PartitionsView>('/cluster');
      const list = (v.partitions ?? []).filter((p) => (o.eventType === undefined || p.event_type === o.eventType) && (o.problems !== true || partitionProblem(p, v.members) !== undefined));
      const unknown = list.some((p) => p.replica_status.some((r) => r.applied_index === null));
      print(
        list,
        () =>
          partitionTable(list, v.members) +
          `${list.length} of ${v.partitions?.length ?? 0} partitions; node ${v.id} counts ${v.under_replicated_partitions} under-replicated and ${v.leaderless_partitions} leaderless\n` +
          (unknown ? `N? in sync: node ${v.id} does not lead that partition and has no figures for replica N (the leader's node has them)\n` : ''),
      );
    });

  type Move = { event_type: string; partition: string; group: number; placement: { replicas: number[]; learners: number[]; moving: { from: number; to: number } | null } };
  const printMove = (m: Move) =>
    print(m, () =>
      fields([
        ['partition', `${m.event_type} ${m.partition} (group ${m.group})`],
        ['replicas', m.placement.replicas.join(', ')],
        ['learners', m.placement.learners.join(', ')],
        ['moving', m.placement.moving === null ? '' : `${m.placement.moving.from} -> ${m.placement.moving.to}`],
      ]),
    );
  /** The Raft group of a partition of the event type's newest timeline (or `--group` as given). */
  const groupOf = async (eventType: string, partition: string, group: string | undefined): Promise<string> => {
    if (group !== undefined) return group;
    const v = await client().get<PartitionsView>('/cluster');
    const found = (v.partitions ?? []).filter((p) => p.event_type === eventType && p.partition === partition).sort((a, b) => b.topic - a.topic)[0];
    if (found === undefined) throw new CliError(`no partition ${partition} of ${eventType} in GET /cluster`);
    return String(found.group);
  };
  cluster
    .command('move')
    .description('move the replica of a partition on one node to another (administrator); its leader carries it out, `cluster partitions` shows it')
    .argument('<event-type>')
    .argument('<partition>')
    .requiredOption('--from <node>', 'the node whose replica moves')
    .requiredOption('--to <node>', 'the node that takes it')
    .option('--group <group>', 'the Raft group to move instead (a partition of an older timeline; GET /cluster lists them)')
    .action(async (eventType: string, partition: string, o: { from: string; to: string; group?: string }) => {
      const group = await groupOf(eventType, partition, o.group);
      const r = await client().request('POST', `/cluster/partitions/${encodeURIComponent(group)}/move`, { from: Number(o.from), to: Number(o.to) });
      printMove(r.body as Move);
    });
  cluster
    .command('cancel-move')
    .description('cancel the move of a partition\'s replica while its new replica is not promoted (administrator)')
    .argument('<event-type>')
    .argument('<partition>')
    .option('--group <group>', 'the Raft group instead (GET /cluster lists them)')
    .action(async (eventType: string, partition: string, o: { group?: string }) => {
      const group = await groupOf(eventType, partition, o.group);
      const r = await client().request('DELETE', `/cluster/partitions/${encodeURIComponent(group)}/move`);
      printMove(r.body as Move);
    });

  type Loss = { node: number; event_type: string; partition: string; group: number; kept: { newest_offset: string; last_index: number }; damage: { index: number; term: number; reason: string }; term_before: number; term: number };
  const lossRow = (l: Loss) => [`${l.event_type} ${l.partition}`, String(l.group), l.kept.newest_offset, String(l.kept.last_index), String(l.damage.index), l.term === 0 ? 'not yet' : String(l.term), l.damage.reason];
  const lossHeader = ['partition', 'group', 'kept up to offset', 'raft index', 'acknowledged up to index', 'leads at term', 'damage'];
  cluster
    .command('accept-loss')
    .description(
      'LOSES DATA. A partition whose only replica (on the node at --url), or every replica (or two of three), is damaged takes no writes: nobody can repair it. This makes what one replica holds ' +
        '(the only one; of several, the newest or the one on the --replica node) the partition\'s log and lets it lead again; the others rejoin empty and copy it; ' +
        'events acknowledged after that are gone and their offsets go to new events (administrator)',
    )
    .argument('[event-type]')
    .argument('[partition]')
    .option('--group <group>', 'the Raft group instead (GET /cluster lists them)')
    .option('--all', 'every partition of the node at --url whose only replica is damaged')
    .option('--replica <node>', 'several replicas, every one damaged: the node whose replica keeps its log (default: the newest log)')
    .option('--i-accept-data-loss', 'required: says that you mean it')
    .action(async (eventType: string | undefined, partition: string | undefined, o: { group?: string; all?: boolean; replica?: string; iAcceptDataLoss?: boolean }) => {
      if (o.iAcceptDataLoss !== true) throw new CliError('accept-loss loses data for good: add --i-accept-data-loss if you mean it');
      if (o.all === true) {
        if (eventType !== undefined || o.group !== undefined || o.replica !== undefined) throw new CliError('--all takes no partition and no --replica');
        const r = (await client().request('POST', '/cluster/accept-loss')).body as { accepted: Loss[]; refused: { group: number; event_type: string; partition: string; detail: string }[] };
        print(r, () =>
          (r.accepted.length === 0 ? 'no partition of this node had its only replica damaged\n' : `ACCEPTED THE LOSS OF ${r.accepted.length} partition(s)\n${table(lossHeader, r.accepted.map(lossRow))}`) +
          (r.refused.length === 0 ? '' : `\nleft to their repair:\n${table(['partition', 'group', 'why'], r.refused.map((x) => [`${x.event_type} ${x.partition}`, String(x.group), x.detail]))}`),
        );
        return;
      }
      if (o.group === undefined && (eventType === undefined || partition === undefined)) throw new CliError('name the partition (<event-type> <partition>), or --group, or --all');
      const group = await groupOf(eventType ?? '', partition ?? '', o.group);
      const query = o.replica === undefined ? '' : `?replica=${encodeURIComponent(o.replica)}`;
      const r = (await client().request('POST', `/cluster/partitions/${encodeURIComponent(group)}/accept-loss${query}`)).body as Loss & { rejoin?: number[] };
      const rejoin = r.rejoin === undefined ? '' : `\nkept on node ${r.node}; node(s) ${r.rejoin.join(', ')} rejoin empty and are made voters again once they copied it\n`;
      print(r, () => `ACCEPTED THE LOSS\n${table(lossHeader, [lossRow(r)])}${rejoin}`);
    });

  // ------------------------------------------------------------------ event types
  const ets = program.command('event-types').alias('et').description('the event type registry');
  ets
    .command('list')
    .description('every event type')
    .option('-s, --search <text>', 'only names containing this text')
    .action(async (o: { search?: string }) => {
      type Et = { name: string; category: string; owning_application: string; partition_strategy: string; compatibility_mode: string; schema: { version: string }; updated_at: string };
      const list = (await client().get<Et[]>('/event-types')).filter((e) => o.search === undefined || e.name.includes(o.search));
      list.sort((a, b) => a.name.localeCompare(b.name));
      print(list, () =>
        table(
          ['name', 'category', 'owner', 'partitioning', 'compatibility', 'version', 'updated'],
          list.map((e) => [e.name, e.category, e.owning_application, e.partition_strategy, e.compatibility_mode, e.schema.version, e.updated_at]),
        ),
      );
    });
  ets
    .command('show')
    .description('an event type with its partitions and schema versions')
    .argument('<name>')
    .action(async (name: string) => {
      const c = client();
      type Et = Record<string, unknown> & { schema: { version: string; schema: string }; authorization?: Record<string, { data_type: string; value: string }[]> };
      const et = await c.get<Et>(`/event-types/${enc(name)}`);
      const partitions = await c.get<{ partition: string; oldest_available_offset: string; newest_available_offset: string }[]>(`/event-types/${enc(name)}/partitions`).catch((e: unknown) => {
        // A node that does not serve partitions (a multi-node cluster before replication) still shows the type.
        if (e instanceof CliError && e.status === 503) return [];
        throw e;
      });
      const schemas = await c.get<{ items: { version: string; created_at: string }[] }>(`/event-types/${enc(name)}/schemas?limit=100`);
      print({ event_type: et, partitions, schemas: schemas.items }, () => {
        const auth = et.authorization;
        const list = (k: string) => (auth?.[k] ?? []).map((a) => `${a.data_type}:${a.value}`).join(', ') || '-';
        return (
          fields([
            ['name', et['name'] as string],
            ['category', et['category'] as string],
            ['owner', et['owning_application'] as string],
            ['partitioning', `${et['partition_strategy'] as string}${Array.isArray(et['partition_key_fields']) ? ` (${(et['partition_key_fields'] as string[]).join(', ')})` : ''}`],
            ['enrichment', ((et['enrichment_strategies'] as string[] | undefined) ?? []).join(', ') || '-'],
            ['compatibility', et['compatibility_mode'] as string],
            ['schema version', et.schema.version],
            ['retention (ms)', (et['options'] as { retention_time?: number } | undefined)?.retention_time],
            ['authorization', auth === undefined ? 'none (everyone with the scopes)' : `admins ${list('admins')}; readers ${list('readers')}; writers ${list('writers')}`],
            ['created', et['created_at'] as string],
            ['updated', et['updated_at'] as string],
          ]) +
          '\nPARTITIONS\n' +
          table(['partition', 'oldest offset', 'newest offset'], partitions.map((p) => [p.partition, p.oldest_available_offset, p.newest_available_offset])) +
          '\nSCHEMA VERSIONS (newest first)\n' +
          table(['version', 'created'], schemas.items.map((s) => [s.version, s.created_at]))
        );
      });
    });
  ets
    .command('create')
    .description('create an event type from a JSON file (the body of POST /event-types)')
    .requiredOption('-f, --file <file>', 'JSON file, "-" for standard input')
    .action(async (o: { file: string }) => {
      const body = readInput(o.file);
      let name: unknown;
      try {
        name = (JSON.parse(body) as { name?: unknown }).name;
      } catch (e) {
        throw new CliError(`${o.file} is not JSON: ${(e as Error).message}`);
      }
      await client().request('POST', '/event-types', body);
      print({ created: name }, () => `created event type ${String(name)}\n`);
    });

  // ------------------------------------------------------------------ publishing and reading
  program
    .command('publish')
    .description('publish events: a JSON array, one JSON object, or one event per line (NDJSON)')
    .argument('<event-type>')
    .option('-f, --file <file>', 'file to read, "-" or none for standard input')
    .option('-b, --batch-size <n>', 'events per request', (v) => positiveInt(v, '--batch-size'), 500)
    .option('--add-metadata', 'add metadata.eid and metadata.occurred_at where absent')
    .option('--progress', 'report progress on stderr even when it is not a terminal')
    .action(async (name: string, o: { file?: string; batchSize: number; addMetadata?: boolean; progress?: boolean }) => {
      let events = parseEvents(readInput(o.file));
      if (o.addMetadata === true) events = events.map(withMetadata);
      if (events.length === 0) throw new CliError('no events to publish');
      const c = client();
      const showProgress = o.progress === true || process.stderr.isTTY === true;
      const tty = process.stderr.isTTY === true;
      let sent = 0;
      for (let i = 0; i < events.length; i += o.batchSize) {
        const batch = events.slice(i, i + o.batchSize);
        try {
          await c.request('POST', `/event-types/${enc(name)}/events`, batch);
        } catch (e) {
          if (e instanceof CliError && Array.isArray(e.body)) {
            // Item numbers count from the first event of the input, not of the batch.
            const failed = errorOf(e.status ?? 422, e.body, i);
            throw new CliError(sent === 0 ? failed.message : `${failed.message}\n(${sent} events before this batch were published)`, failed.status, failed.body);
          }
          throw e;
        }
        sent += batch.length;
        if (showProgress && events.length > o.batchSize) {
          const pct = Math.floor((sent * 100) / events.length);
          err.write(`${tty ? '\r' : ''}published ${sent}/${events.length} events (${pct}%)${tty ? '' : '\n'}`);
        }
      }
      if (showProgress && tty && events.length > o.batchSize) err.write('\n');
      print({ published: sent }, () => `published ${sent} event${sent === 1 ? '' : 's'} to ${name}\n`);
    });

  program
    .command('tail')
    .description('stream the events of an event type to the terminal (Ctrl-C stops)')
    .argument('<event-type>')
    .addOption(new Option('--from <where>', 'begin: every stored event; end: only new ones').choices(['begin', 'end']).default('end'))
    .option('-n, --limit <n>', 'stop after this many events', (v) => positiveInt(v, '--limit'))
    .action(async (name: string, o: { from: 'begin' | 'end'; limit?: number }) => {
      const c = client();
      const headers: Record<string, string> = {};
      if (o.from === 'begin') {
        const partitions = await c.get<{ partition: string }[]>(`/event-types/${enc(name)}/partitions`);
        headers['X-Svc-Cursors'] = JSON.stringify(partitions.map((p) => ({ partition: p.partition, offset: 'BEGIN' })));
      }
      const query = new URLSearchParams({ batch_limit: '100', batch_flush_timeout: '1' });
      if (o.limit !== undefined) {
        query.set('stream_limit', String(o.limit));
        query.set('batch_limit', String(Math.min(100, o.limit)));
      }
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        const res = await c.fetch(`/event-types/${enc(name)}/events?${query}`, { headers: c.headers(headers), signal: abort.signal });
        if (res.status >= 400) {
          const text = await res.text();
          throw errorOf(res.status, text === '' ? undefined : (JSON.parse(text) as unknown));
        }
        if (g().json !== true) err.write(`tailing ${name} from the ${o.from === 'begin' ? 'oldest event' : 'newest event'} (Ctrl-C stops)\n`);
        let buf = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() === '') continue;
            const batch = JSON.parse(line) as { cursor: { partition: string; offset: string }; events?: unknown[] };
            for (const e of batch.events ?? []) {
              out.write(g().json === true ? JSON.stringify(e) + '\n' : `[partition ${batch.cursor.partition}] ${JSON.stringify(e)}\n`);
            }
          }
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        throw e;
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });

  // ------------------------------------------------------------------ subscriptions
  const subs = program.command('subscriptions').alias('subs').description('subscriptions (the high-level API)');
  subs
    .command('list')
    .description('subscriptions, newest first')
    .option('-e, --event-type <name>', 'only those reading this event type')
    .option('-o, --owning-application <app>', 'only those of this application')
    .action(async (o: { eventType?: string; owningApplication?: string }) => {
      type Sub = { id: string; owning_application: string; event_types: string[]; consumer_group: string; read_from: string; created_at: string };
      const c = client();
      const items: Sub[] = [];
      // Follow the pages to the end: a person wants the whole list.
      let next: string | undefined = `/subscriptions?limit=100${o.eventType === undefined ? '' : `&event_type=${enc(o.eventType)}`}${o.owningApplication === undefined ? '' : `&owning_application=${enc(o.owningApplication)}`}`;
      while (next !== undefined) {
        const page: { items: Sub[]; _links: { next?: { href: string } } } = await c.get(next);
        items.push(...page.items);
        next = page.items.length === 0 ? undefined : page._links.next?.href;
      }
      print(items, () =>
        table(
          ['id', 'owner', 'event types', 'group', 'read from', 'created'],
          items.map((s) => [s.id, s.owning_application, s.event_types.join(','), s.consumer_group, s.read_from, s.created_at]),
        ),
      );
    });
  subs
    .command('lag')
    .description('per partition: unconsumed events, state and the stream that owns it')
    .argument('<id>')
    .action(async (id: string) => {
      type Stats = { items: { event_type: string; partitions: { partition: string; state: string; stream_id?: string; unconsumed_events?: number }[] }[] };
      const stats = await client().get<Stats>(`/subscriptions/${enc(id)}/stats`);
      const rows = stats.items.flatMap((et) => et.partitions.map((p) => [et.event_type, p.partition, p.unconsumed_events, p.state, p.stream_id] as const));
      const total = rows.reduce((s, r) => s + (r[2] ?? 0), 0);
      // The broker leaves the lag out for a partition no stream has read yet (read_from begin or end).
      const unknown = rows.filter((r) => r[2] === undefined).length;
      const note = unknown === 0 ? '' : ` (not known for ${unknown} partition${unknown === 1 ? '' : 's'} that no stream has read yet)`;
      print(stats, () => table(['event type', 'partition', 'lag', 'state', 'stream'], rows.map((r) => [...r])) + `total lag: ${total} events${note}\n`);
    });

  // ------------------------------------------------------------------ settings (administrator)
  const settings = program.command('settings').description('administration: feature toggles, blacklist, storages, timelines');
  settings
    .command('features')
    .description('feature toggles')
    .action(async () => {
      const f = await client().get<{ items: { feature: string; enabled: boolean }[] }>('/settings/features');
      print(f, () => table(['feature', 'enabled'], f.items.map((x) => [x.feature, x.enabled ? 'on' : 'off'])));
    });
  settings
    .command('feature')
    .description('turn a feature toggle on or off')
    .argument('<name>')
    .addArgument(new Command().createArgument('<state>', 'on or off').choices(['on', 'off']))
    .action(async (name: string, state: 'on' | 'off') => {
      await client().request('POST', '/settings/features', { feature: name, enabled: state === 'on' });
      print({ feature: name, enabled: state === 'on' }, () => `${name}: ${state}\n`);
    });
  const blacklist = settings.command('blacklist').description('blocked producers and consumers');
  blacklist
    .command('show', { isDefault: true })
    .description('the blacklist')
    .action(async () => {
      type Lists = { apps?: string[]; event_types?: string[] };
      const b = await client().get<{ consumers?: Lists; producers?: Lists }>('/settings/blacklist');
      const rows: string[][] = [];
      for (const [side, l] of [['CONSUMER', b.consumers], ['PRODUCER', b.producers]] as const) {
        for (const a of l?.apps ?? []) rows.push([`${side}_APP`, a]);
        for (const e of l?.event_types ?? []) rows.push([`${side}_ET`, e]);
      }
      print(b, () => table(['type', 'name'], rows));
    });
  const blacklistTypes = ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'];
  for (const [verb, method] of [['add', 'PUT'], ['remove', 'DELETE']] as const) {
    blacklist
      .command(verb)
      .description(`${verb === 'add' ? 'block' : 'unblock'} an application or event type`)
      .addArgument(new Command().createArgument('<type>').choices(blacklistTypes))
      .argument('<name>')
      .action(async (type: string, name: string) => {
        await client().request(method, `/settings/blacklist/${type}/${enc(name)}`);
        print({ type, name, blacklisted: verb === 'add' }, () => `${verb === 'add' ? 'blacklisted' : 'removed from the blacklist'}: ${type} ${name}\n`);
      });
  }
  settings
    .command('storages')
    .description('storages')
    .action(async () => {
      const s = await client().get<{ id: string; storage_type: string; broker_configuration: Record<string, string> }[]>('/storages');
      print(s, () => table(['id', 'type', 'configuration'], s.map((x) => [x.id, x.storage_type, JSON.stringify(x.broker_configuration)])));
    });
  settings
    .command('timelines')
    .description('the timelines of an event type')
    .argument('<event-type>')
    .action(async (name: string) => {
      const t = await client().get<{ id: string; order: number; storage_id: string; created_at: string; switched_at: string }[]>(`/event-types/${enc(name)}/timelines`);
      print(t, () => table(['order', 'id', 'storage', 'created', 'switched'], t.map((x) => [x.order, x.id, x.storage_id, x.created_at, x.switched_at])));
    });

  return program;
}

function positiveInt(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new CliError(`${name} must be a positive integer`);
  return n;
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Runs the tool; resolves with the exit code (errors are printed, never thrown). */
export async function run(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  const program = buildProgram(out, err);
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const code = (e as { code?: string; exitCode?: number }).code;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      // Help and version exit 0; usage errors were printed by commander.
      return (e as { exitCode: number }).exitCode;
    }
    err.write(`brook: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

const entry = process.argv[1];
if (entry !== undefined && fileURLToPath(import.meta.url) === (await import('node:fs')).realpathSync(entry)) {
  process.exitCode = await run(process.argv.slice(2));
}
