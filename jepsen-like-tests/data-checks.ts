/**
 * Checkers of the data workload over a recorded history (data-history.ts), pure functions, and the
 * corruptions that prove each of them can fail (planted into a copy of a real history).
 *
 * Over every node's final copy of every partition:
 * - lost: every acknowledged event (200, or `submitted` in a 207) is stored;
 * - phantom: every stored event is one a producer sent, with the key and seq it was sent with;
 * - failed-stored: no event the broker answered `failed` or `aborted` (or 422, or another 4xx) is stored;
 * - duplicate: an eid is stored at most once (in one partition, at one offset);
 * - order: a key's events are in one partition (hash partitioning) and, for every acknowledged event,
 *   no event of the same key with a higher sequence number is stored before it (the producer published
 *   the higher one only after this one was acknowledged);
 * - offsets: each partition's offsets run densely from 0 to the newest offset the node reports;
 * - divergence: every node stores the same events at the same offsets.
 * Over what consumers were sent:
 * - consumer: every (partition, offset) a consumer was sent holds the same eid in final storage (no
 *   uncommitted or rolled-back event was ever shown); an eid was never sent at two positions; a
 *   low-level stream consumer's events of a partition are exactly consecutive offsets across all its
 *   reconnections (no skip, no repeat, no reorder); a subscription stream never skips within a
 *   partition and the subscription as a whole was sent every offset up to the highest it was sent.
 * - stream-refused: a low-level stream is opened with cursors the broker itself sent to this consumer
 *   (committed events), on any node; no node may refuse them (4xx other than 429 Too Many Requests),
 *   e.g. as "does not exist yet" because it has not applied that far.
 * Over subscription cursors:
 * - cursor: a committed cursor read (GET .../cursors) is never behind one read or acknowledged
 *   (committed, or outdated: something at least as recent was committed) before that read began; it
 *   is one the consumer committed; after healing every node answers the same cursors.
 * - sub-liveness: after healing, a subscription consumer gets every partition to its newest offset
 *   (committed) within 20 s; a session left behind by a stream that ended during a fault must not
 *   hold partitions for ever.
 * - protocol: lines that break the interface's shape (keep-alive cursor not at the stream's position,
 *   an unparseable line or cursor).
 */
import type { CommitOp, ConsumedBatch, CursorRead, DataHistory, EventResult, FinalRead, StoredEvent } from './data-history.js';

export type CheckName = 'lost' | 'phantom' | 'failed-stored' | 'duplicate' | 'order' | 'offsets' | 'divergence' | 'final-read' | 'consumer' | 'stream-refused' | 'cursor' | 'sub-liveness' | 'protocol';

export const checkNames: readonly CheckName[] = ['lost', 'phantom', 'failed-stored', 'duplicate', 'order', 'offsets', 'divergence', 'final-read', 'consumer', 'stream-refused', 'cursor', 'sub-liveness', 'protocol'];

export interface Violation {
  check: CheckName;
  message: string;
}

export interface DataCheckResult {
  violations: Violation[];
  /** Violations per check (all of them; `violations` keeps the first few of each). */
  counts: Map<CheckName, number>;
  stats: Record<string, number>;
}

interface SentInfo {
  eid: string;
  key: string;
  seq: number;
  result: EventResult;
  producer: number;
  flow: string;
  node: number;
  status: string;
  invoke: number;
  complete: number | null;
  detail?: string;
}

const examplesPerCheck = 8;

export function checkData(h: DataHistory & { anomalies?: string[] }): DataCheckResult {
  const counts = new Map<CheckName, number>();
  const violations: Violation[] = [];
  const flag = (check: CheckName, message: string): void => {
    const n = (counts.get(check) ?? 0) + 1;
    counts.set(check, n);
    if (n <= examplesPerCheck) violations.push({ check, message });
  };
  const stats: Record<string, number> = {};

  const sent = new Map<string, SentInfo>();
  for (const op of h.publishes) {
    op.events.forEach((e, i) => {
      const info: SentInfo = { ...e, result: op.results[i] ?? 'unknown', producer: op.producer, flow: op.flow, node: op.node, status: op.status, invoke: op.invoke, complete: op.complete };
      if (op.detail !== undefined) info.detail = op.detail;
      sent.set(e.eid, info);
    });
    const n = Number(op.status);
    if (n >= 400 && n !== 422 && !(op.contentType ?? '').startsWith('application/problem+json')) {
      flag('protocol', `${op.flow} on node ${op.node}: answered ${op.status} with content-type ${JSON.stringify(op.contentType ?? '')}, not a Problem: ${op.detail ?? ''}`);
    }
  }
  const acked = [...sent.values()].filter((s) => s.result === 'acked');
  stats['events sent'] = sent.size;
  stats['events acknowledged'] = acked.length;
  stats['events failed/aborted'] = [...sent.values()].filter((s) => s.result === 'failed' || s.result === 'aborted').length;
  stats['events unknown'] = [...sent.values()].filter((s) => s.result === 'unknown').length;
  const describe = (s: SentInfo | undefined): string =>
    s === undefined
      ? 'never sent'
      : `sent by ${s.flow} to node ${s.node} [${s.invoke.toFixed(0)}, ${s.complete === null ? 'no answer' : s.complete.toFixed(0)}] ms, answered ${s.status} (${s.result}${s.detail ? `: ${s.detail.slice(0, 160)}` : ''})`;
  const firstSeen = new Map<string, number>();
  for (const b of h.consumed) for (const [, eid] of b.events) if (!firstSeen.has(eid)) firstSeen.set(eid, b.at);

  // ---------------------------------------------------------------- final storage, per node
  const finals = h.finals.filter((f) => {
    if (f.error !== undefined) flag('final-read', `node ${f.node}: could not read every partition to its end: ${f.error}`);
    return f.error === undefined;
  });
  if (h.finals.length === 0) flag('final-read', 'no final read at all');
  // Per-node findings, reported once with the nodes they hold on.
  const onNodes = new Map<string, { check: CheckName; message: string; nodes: number[] }>();
  const flagOn = (check: CheckName, node: number, message: string): void => {
    const k = `${check}\u0000${message}`;
    const x = onNodes.get(k);
    if (x !== undefined) x.nodes.push(node);
    else onNodes.set(k, { check, message, nodes: [node] });
  };
  for (const f of finals) {
    const where = new Map<string, { partition: string; offset: number }[]>();
    for (const p of h.partitions) {
      const evs = f.partitions[p] ?? [];
      // offsets: dense from 0 to newest
      const newest = f.newest[p] ?? -1;
      const bad = evs.findIndex((e, i) => e.offset !== i);
      if (bad >= 0) flagOn('offsets', f.node, `partition ${p}: event #${bad} has offset ${evs[bad]!.offset} (offsets must run 0, 1, 2, ...)`);
      else if (evs.length - 1 !== newest) flagOn('offsets', f.node, `partition ${p}: read ${evs.length} events, the node reports newest offset ${newest}`);
      for (const e of evs) {
        const list = where.get(e.eid) ?? [];
        list.push({ partition: p, offset: e.offset });
        where.set(e.eid, list);
        const s = sent.get(e.eid);
        if (s === undefined) flagOn('phantom', f.node, `partition ${p} offset ${e.offset}: eid ${e.eid} (key ${e.key}, seq ${e.seq}) was never sent`);
        else if (s.key !== e.key || s.seq !== e.seq) flagOn('phantom', f.node, `partition ${p} offset ${e.offset}: eid ${e.eid} stored as key ${e.key} seq ${e.seq}, sent as key ${s.key} seq ${s.seq}`);
        else if (s.result === 'failed' || s.result === 'aborted') {
          const w = commitWindow(evs, e.offset, sent, firstSeen);
          const when = s.complete === null ? '' : w.hi < s.complete ? '; it was committed BEFORE that answer' : w.lo > s.complete ? '; it was committed AFTER that answer' : '';
          flagOn('failed-stored', f.node, `partition ${p} offset ${e.offset}: eid ${e.eid} (key ${e.key} seq ${e.seq}) is stored (committed within [${w.lo.toFixed(0)}, ${w.hi.toFixed(0)}] ms${when}), but was ${describe(s)}`);
        }
        if (e.partition !== undefined && e.partition !== p) flagOn('order', f.node, `eid ${e.eid} read from partition ${p} says metadata.partition ${e.partition}`);
      }
    }
    for (const [eid, list] of where) {
      if (list.length > 1) flagOn('duplicate', f.node, `eid ${eid} stored ${list.length} times: ${list.map((w) => `${w.partition}@${w.offset}`).join(', ')} (${describe(sent.get(eid))})`);
    }
    let lost = 0;
    for (const s of acked) {
      if (where.has(s.eid)) continue;
      lost++;
      flagOn('lost', f.node, `acknowledged eid ${s.eid} (key ${s.key} seq ${s.seq}) is not stored; ${describe(s)}`);
    }
    stats[`node ${f.node} lost`] = lost;
    // order per key
    const keyPartition = new Map<string, string>();
    for (const p of h.partitions) {
      const maxSeqBefore = new Map<string, { seq: number; offset: number }>();
      for (const e of f.partitions[p] ?? []) {
        const s = sent.get(e.eid);
        if (s === undefined) continue;
        const kp = keyPartition.get(s.key);
        if (kp !== undefined && kp !== p) flagOn('order', f.node, `key ${s.key} is stored in partitions ${kp} and ${p} (hash partitioning puts a key in one partition)`);
        keyPartition.set(s.key, p);
        const before = maxSeqBefore.get(s.key);
        if (before !== undefined && s.result === 'acked' && before.seq > s.seq) {
          flagOn('order', f.node, `partition ${p}: acknowledged key ${s.key} seq ${s.seq} at offset ${e.offset} comes after seq ${before.seq} at offset ${before.offset}; seq ${s.seq} was ${describe(s)}`);
        }
        if (before === undefined || s.seq > before.seq) maxSeqBefore.set(s.key, { seq: s.seq, offset: e.offset });
      }
    }
  }
  for (const x of onNodes.values()) flag(x.check, `${x.message} [node${x.nodes.length > 1 ? 's' : ''} ${x.nodes.join(', ')}]`);
  // divergence: every node against the first complete read
  const ref = finals[0];
  if (ref !== undefined) {
    for (const f of finals.slice(1)) {
      for (const p of h.partitions) {
        const a = ref.partitions[p] ?? [];
        const b = f.partitions[p] ?? [];
        const n = Math.max(a.length, b.length);
        for (let i = 0; i < n; i++) {
          if (a[i]?.eid === b[i]?.eid && a[i]?.offset === b[i]?.offset) continue;
          flag('divergence', `partition ${p}: node ${ref.node} has ${fmtStored(a[i])} at #${i}, node ${f.node} has ${fmtStored(b[i])} (node ${ref.node}: ${a.length} events, node ${f.node}: ${b.length})`);
          break;
        }
      }
    }
  }
  if (ref !== undefined) {
    stats['events stored'] = h.partitions.reduce((s, p) => s + (ref.partitions[p]?.length ?? 0), 0);
    stats['unknown events stored'] = [...sent.values()].filter((s) => s.result === 'unknown').filter((s) => h.partitions.some((p) => (ref.partitions[p] ?? []).some((e) => e.eid === s.eid))).length;
  }

  // ---------------------------------------------------------------- consumers
  const at = new Map<string, Map<number, string>>();
  if (ref !== undefined) for (const p of h.partitions) at.set(p, new Map((ref.partitions[p] ?? []).map((e) => [e.offset, e.eid])));
  const seenAt = new Map<string, string>();
  const byConsumer = new Map<string, ConsumedBatch[]>();
  let consumedEvents = 0;
  for (const b of h.consumed) {
    const list = byConsumer.get(b.consumer) ?? [];
    list.push(b);
    byConsumer.set(b.consumer, list);
    for (const [offset, eid] of b.events) {
      consumedEvents++;
      const stored = at.get(b.partition)?.get(offset);
      if (ref !== undefined && stored !== eid) {
        flag('consumer', `${b.consumer}#${b.conn} was sent eid ${eid} at partition ${b.partition} offset ${offset} (${(b.at / 1000).toFixed(1)} s); node ${ref.node} stores ${stored ?? 'nothing'} there; ${describe(sent.get(eid))}`);
      }
      const pos = `${b.partition}@${offset}`;
      const prev = seenAt.get(eid);
      if (prev !== undefined && prev !== pos) flag('consumer', `eid ${eid} was sent at ${prev} and at ${pos} (${b.consumer}#${b.conn})`);
      seenAt.set(eid, pos);
    }
  }
  stats['events consumed'] = consumedEvents;
  for (const [consumer, batches] of byConsumer) {
    if (consumer === 'sub') continue;
    const next = new Map<string, number>();
    for (const b of batches) {
      const first = b.events[0]?.[0];
      if (first === undefined) continue;
      const want = next.get(b.partition) ?? 0;
      if (first !== want) {
        const conn = h.conns.find((c) => c.consumer === consumer && c.conn === b.conn);
        flag('consumer', `${consumer}#${b.conn}${conn ? ` (node ${conn.node}, started after ${JSON.stringify(conn.start)})` : ''}: partition ${b.partition} continued at offset ${first}, expected ${want} (${first > want ? 'skipped' : 'repeated'} ${Math.abs(first - want)})`);
      }
      next.set(b.partition, b.events[b.events.length - 1]![0] + 1);
    }
  }
  for (const c of h.conns) {
    const n = Number(c.status);
    if (c.consumer !== 'sub' && n >= 400 && n < 500 && n !== 429) {
      flag('stream-refused', `${c.consumer}#${c.conn} on node ${c.node} at ${(c.opened / 1000).toFixed(1)} s, after cursors ${JSON.stringify(c.start)} it had been sent: ${c.status} ${c.end}`);
    }
  }
  const sub = byConsumer.get('sub') ?? [];
  const subSeen = new Map<string, Set<number>>();
  const lastInStream = new Map<string, number>();
  for (const b of sub) {
    const first = b.events[0]?.[0];
    if (first === undefined) continue;
    const k = `${b.conn}/${b.partition}`;
    const last = lastInStream.get(k);
    if (last !== undefined && first > last + 1) flag('consumer', `subscription stream sub#${b.conn}: partition ${b.partition} jumped from offset ${last} to ${first}`);
    lastInStream.set(k, b.events[b.events.length - 1]![0]);
    const set = subSeen.get(b.partition) ?? new Set<number>();
    for (const [o] of b.events) set.add(o);
    subSeen.set(b.partition, set);
  }
  for (const [p, set] of subSeen) {
    const max = Math.max(...set);
    for (let o = 0; o <= max; o++) {
      if (!set.has(o)) {
        flag('consumer', `subscription: partition ${p} offset ${o} was never sent, though offsets up to ${max} were`);
        break;
      }
    }
  }
  stats['subscription events sent'] = sub.reduce((s, b) => s + b.events.length, 0);

  // ---------------------------------------------------------------- subscription cursors
  checkCursors(h.commits, h.cursorReads, h.partitions, subSeen, flag, stats);

  if (h.subDrain !== undefined) {
    const d = h.subDrain;
    const behind = h.partitions.filter((p) => (d.committed[p] ?? -1) < (d.newest[p] ?? -1));
    if (behind.length > 0) {
      const streams = h.conns.filter((c) => c.consumer === 'sub' && c.streamId !== undefined).slice(-6).map((c) => `sub#${c.conn} ${c.streamId} node ${c.node} [${(c.opened / 1000).toFixed(1)}, ${(c.closed / 1000).toFixed(1)}] s ${c.end.slice(0, 40)}`);
      flag(
        'sub-liveness',
        `after healing, ${d.seconds.toFixed(0)} s of consuming did not commit partition(s) ${behind.join(', ')} to the end: committed ${JSON.stringify(d.committed)}, newest ${JSON.stringify(d.newest)}; stats ${JSON.stringify(d.stats)}; last streams: ${streams.join('; ')}`,
      );
    }
  }
  for (const a of h.anomalies ?? []) flag('protocol', a);
  return { violations, counts, stats };
}

/**
 * When the event at `offset` was committed, as far as the history tells: not before any event at or
 * below it was sent (offsets follow commit order), not after any event at or above it was acknowledged
 * or shown to a consumer.
 */
function commitWindow(evs: readonly StoredEvent[], offset: number, sent: Map<string, SentInfo>, firstSeen: Map<string, number>): { lo: number; hi: number } {
  let lo = -Infinity;
  let hi = Infinity;
  for (const e of evs) {
    const s = sent.get(e.eid);
    if (e.offset <= offset && s !== undefined) lo = Math.max(lo, s.invoke);
    if (e.offset >= offset) {
      if (s?.result === 'acked' && s.complete !== null) hi = Math.min(hi, s.complete);
      const seen = firstSeen.get(e.eid);
      if (seen !== undefined) hi = Math.min(hi, seen);
    }
  }
  return { lo, hi };
}

function fmtStored(e: StoredEvent | undefined): string {
  return e === undefined ? 'nothing' : `${e.eid} (key ${e.key} seq ${e.seq}, offset ${e.offset})`;
}

function checkCursors(
  commits: readonly CommitOp[],
  reads: readonly CursorRead[],
  partitions: readonly string[],
  subSeen: Map<string, Set<number>>,
  flag: (c: CheckName, m: string) => void,
  stats: Record<string, number>,
): void {
  // Offsets the consumer committed, per partition (what a committed cursor may be, besides BEGIN).
  const committedByConsumer = new Map<string, Set<number>>();
  for (const c of commits) for (const x of c.cursors) (committedByConsumer.get(x.partition) ?? committedByConsumer.set(x.partition, new Set()).get(x.partition)!).add(x.offset);
  stats['commits'] = commits.length;
  stats['commits acknowledged'] = commits.filter((c) => c.results !== undefined).length;
  stats['cursor reads'] = reads.length;
  for (const p of partitions) {
    // Lower bounds known at a time: a read's answer from its completion on, an acknowledged commit's offset from its completion on.
    const sources: { at: number; offset: number; what: string }[] = [];
    for (const r of reads) {
      const o = r.cursors[p];
      if (o !== undefined) sources.push({ at: r.complete, offset: o, what: `read on node ${r.node} [${r.invoke.toFixed(0)}, ${r.complete.toFixed(0)}] ms${r.final ? ' (final)' : ''}` });
    }
    for (const c of commits) {
      if (c.results === undefined || c.complete === null) continue;
      c.cursors.forEach((x, i) => {
        const res = c.results![i];
        if (x.partition === p && (res === 'committed' || res === 'outdated')) sources.push({ at: c.complete!, offset: x.offset, what: `commit of sub#${c.conn} on node ${c.node} [${c.invoke.toFixed(0)}, ${c.complete!.toFixed(0)}] ms answered ${res}` });
      });
    }
    sources.sort((a, b) => a.at - b.at);
    const ordered = reads.filter((r) => r.cursors[p] !== undefined || r.final).sort((a, b) => a.invoke - b.invoke);
    let k = 0;
    let best: { offset: number; what: string } | undefined;
    let reported = false;
    for (const r of ordered) {
      while (k < sources.length && sources[k]!.at < r.invoke) {
        if (best === undefined || sources[k]!.offset > best.offset) best = sources[k]!;
        k++;
      }
      const o = r.cursors[p] ?? -1;
      if (best !== undefined && o < best.offset && !reported) {
        flag('cursor', `partition ${p}: read on node ${r.node} [${r.invoke.toFixed(0)}, ${r.complete.toFixed(0)}] ms${r.final ? ' (final)' : ''} answered offset ${o}, but ${best.offset} was known committed before it began (${best.what})`);
        reported = true;
      }
      if (o >= 0 && !(committedByConsumer.get(p)?.has(o) ?? false)) flag('cursor', `partition ${p}: read on node ${r.node} answered offset ${o}, which the consumer never committed`);
      if (o >= 0 && !(subSeen.get(p)?.has(o) ?? false)) flag('cursor', `partition ${p}: committed offset ${o} was never sent to the subscription consumer`);
    }
  }
  const finals = reads.filter((r) => r.final);
  for (const r of finals.slice(1)) {
    if (JSON.stringify(sortKeys(r.cursors)) !== JSON.stringify(sortKeys(finals[0]!.cursors))) {
      flag('cursor', `after healing, node ${finals[0]!.node} answers cursors ${JSON.stringify(sortKeys(finals[0]!.cursors))} and node ${r.node} ${JSON.stringify(sortKeys(r.cursors))}`);
    }
  }
}

function sortKeys(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)));
}

// ------------------------------------------------------------------------------------ self-checks

export interface Plant {
  check: CheckName;
  description: string;
  history: DataHistory;
}

function copy(h: DataHistory): DataHistory {
  return structuredClone(h);
}

function completeFinals(h: DataHistory): FinalRead[] {
  return h.finals.filter((f) => f.error === undefined);
}

function ackedSet(h: DataHistory): Set<string> {
  const s = new Set<string>();
  for (const op of h.publishes) op.events.forEach((e, i) => op.results[i] === 'acked' && s.add(e.eid));
  return s;
}

/** Appends `make(last)` at the end of partition p on every complete final read. */
function appendEverywhere(h: DataHistory, p: string, make: (offset: number) => StoredEvent): void {
  for (const f of completeFinals(h)) {
    const list = f.partitions[p]!;
    const offset = list.length;
    list.push(make(offset));
    f.newest[p] = offset;
  }
}

/**
 * The corruptions, each planted into its own copy of the history; each must make its checker fail.
 * Returns, per check, the corrupted history, or a reason it could not be planted.
 */
export function plants(h: DataHistory): (Plant | { check: CheckName; impossible: string })[] {
  const out: (Plant | { check: CheckName; impossible: string })[] = [];
  const acked = ackedSet(h);
  const ref = completeFinals(h)[0];
  const stored = (pred: (e: StoredEvent, p: string, i: number) => boolean): { p: string; i: number; e: StoredEvent } | undefined => {
    if (ref === undefined) return undefined;
    for (const p of h.partitions) {
      const list = ref.partitions[p] ?? [];
      for (let i = 0; i < list.length; i++) if (pred(list[i]!, p, i)) return { p, i, e: list[i]! };
    }
    return undefined;
  };

  // lost: an acknowledged event removed from every node (later offsets renumbered).
  {
    const x = stored((e) => acked.has(e.eid));
    if (x === undefined) out.push({ check: 'lost', impossible: 'no acknowledged event stored' });
    else {
      const c = copy(h);
      for (const f of completeFinals(c)) {
        const list = f.partitions[x.p]!;
        const j = list.findIndex((e) => e.eid === x.e.eid);
        if (j < 0) continue;
        list.splice(j, 1);
        for (let k = j; k < list.length; k++) list[k]!.offset--;
        f.newest[x.p] = list.length - 1;
      }
      out.push({ check: 'lost', description: `acknowledged ${x.e.eid} (key ${x.e.key} seq ${x.e.seq}) removed from partition ${x.p} on every node`, history: c });
    }
  }
  // phantom: an event nobody sent, appended everywhere.
  {
    const p = h.partitions[0]!;
    const c = copy(h);
    appendEverywhere(c, p, (offset) => ({ offset, eid: '00000000-dead-4000-8000-000000000000', key: 'p0k0', seq: 1, partition: p }));
    out.push({ check: 'phantom', description: `an event no producer sent appended to partition ${p} on every node`, history: c });
  }
  // failed-stored: a stored event whose answer is turned into `failed`.
  {
    const x = stored((e) => acked.has(e.eid));
    if (x === undefined) out.push({ check: 'failed-stored', impossible: 'no acknowledged event stored' });
    else {
      const c = copy(h);
      for (const op of c.publishes) op.events.forEach((e, i) => e.eid === x.e.eid && (op.results[i] = 'failed'));
      out.push({ check: 'failed-stored', description: `the answer for stored ${x.e.eid} made 'failed'`, history: c });
    }
  }
  // duplicate: an acknowledged event appended again to its partition everywhere.
  {
    const x = stored((e) => acked.has(e.eid));
    if (x === undefined) out.push({ check: 'duplicate', impossible: 'no acknowledged event stored' });
    else {
      const c = copy(h);
      appendEverywhere(c, x.p, (offset) => ({ ...x.e, offset }));
      out.push({ check: 'duplicate', description: `${x.e.eid} appended a second time to partition ${x.p} on every node`, history: c });
    }
  }
  // order: two acknowledged events of one key swapped everywhere.
  {
    let found: { p: string; i: number; j: number } | undefined;
    if (ref !== undefined) {
      outer: for (const p of h.partitions) {
        const list = ref.partitions[p] ?? [];
        const firstOfKey = new Map<string, number>();
        for (let j = 0; j < list.length; j++) {
          if (!acked.has(list[j]!.eid)) continue;
          const i = firstOfKey.get(list[j]!.key);
          if (i !== undefined) {
            found = { p, i, j };
            break outer;
          }
          firstOfKey.set(list[j]!.key, j);
        }
      }
    }
    if (found === undefined) out.push({ check: 'order', impossible: 'no key with two acknowledged events stored' });
    else {
      const c = copy(h);
      for (const f of completeFinals(c)) {
        const list = f.partitions[found.p]!;
        const a = list[found.i]!;
        const b = list[found.j]!;
        list[found.i] = { ...b, offset: a.offset };
        list[found.j] = { ...a, offset: b.offset };
      }
      const a = ref!.partitions[found.p]![found.i]!;
      const b = ref!.partitions[found.p]![found.j]!;
      out.push({ check: 'order', description: `key ${a.key}: seq ${a.seq} (offset ${a.offset}) and seq ${b.seq} (offset ${b.offset}) of partition ${found.p} swapped on every node`, history: c });
    }
  }
  // divergence: on one node, two neighbouring events of different keys swapped (each key's order kept).
  {
    const x = stored((e, p, i) => {
      const next = ref!.partitions[p]![i + 1];
      return next !== undefined && next.key !== e.key;
    });
    const last = completeFinals(h).at(-1);
    if (x === undefined || last === undefined || completeFinals(h).length < 2) out.push({ check: 'divergence', impossible: 'fewer than two complete final reads, or no neighbouring events of different keys' });
    else {
      const c = copy(h);
      const f = completeFinals(c).at(-1)!;
      const list = f.partitions[x.p]!;
      const a = list[x.i]!;
      const b = list[x.i + 1]!;
      list[x.i] = { ...b, offset: a.offset };
      list[x.i + 1] = { ...a, offset: b.offset };
      out.push({ check: 'divergence', description: `on node ${f.node}, partition ${x.p} offsets ${x.i} and ${x.i + 1} (keys ${a.key}, ${b.key}) swapped`, history: c });
    }
  }
  // offsets: on one node, the last event of a partition moved one offset up (a gap).
  {
    const f = completeFinals(h).at(-1);
    const p = f === undefined ? undefined : h.partitions.find((q) => (f.partitions[q]?.length ?? 0) > 0);
    if (f === undefined || p === undefined) out.push({ check: 'offsets', impossible: 'no event stored' });
    else {
      const c = copy(h);
      const g = completeFinals(c).at(-1)!;
      const last = g.partitions[p]!.at(-1)!;
      last.offset++;
      g.newest[p] = last.offset;
      out.push({ check: 'offsets', description: `on node ${g.node}, the last event of partition ${p} moved from offset ${last.offset - 1} to ${last.offset}`, history: c });
    }
  }
  // consumer (dirty read): a stream consumer made to see another eid at an offset.
  {
    const k = h.consumed.findIndex((b) => b.consumer !== 'sub' && b.events.length > 0);
    const other = stored((e, p) => k >= 0 && !(p === h.consumed[k]!.partition && e.offset === h.consumed[k]!.events[0]![0]));
    if (k < 0 || other === undefined) out.push({ check: 'consumer', impossible: 'no event consumed through a low-level stream' });
    else {
      const c = copy(h);
      const b = c.consumed[k]!;
      const was = b.events[0]![1];
      b.events[0] = [b.events[0]![0], other.e.eid];
      out.push({ check: 'consumer', description: `${b.consumer}#${b.conn} made to see ${other.e.eid} at partition ${b.partition} offset ${b.events[0]![0]} instead of ${was}`, history: c });
    }
  }
  // consumer (skip): a low-level consumer's batch removed when the same consumer got a later batch of that partition.
  {
    const k = h.consumed.findIndex((b, i) => b.consumer !== 'sub' && b.events.length > 0 && h.consumed.slice(i + 1).some((x) => x.consumer === b.consumer && x.partition === b.partition && x.events.length > 0));
    if (k < 0) out.push({ check: 'consumer', impossible: 'no stream consumer got two batches of one partition' });
    else {
      const c = copy(h);
      const [b] = c.consumed.splice(k, 1);
      out.push({ check: 'consumer', description: `${b!.consumer}#${b!.conn}'s batch of partition ${b!.partition} at offsets ${b!.events[0]![0]}..${b!.events.at(-1)![0]} dropped (a skip)`, history: c });
    }
  }
  // stream-refused: a low-level stream's open made to answer 422.
  {
    const k = h.conns.findIndex((c) => c.consumer !== 'sub' && c.status === '200');
    if (k < 0) out.push({ check: 'stream-refused', impossible: 'no low-level stream was opened' });
    else {
      const c = copy(h);
      const conn = c.conns[k]!;
      conn.status = '422';
      conn.end = 'refused: (planted) the offset does not exist yet';
      out.push({ check: 'stream-refused', description: `${conn.consumer}#${conn.conn}'s open on node ${conn.node} made to answer 422`, history: c });
    }
  }
  // sub-liveness: the drain made to end one offset short.
  {
    const d = h.subDrain;
    const p = d === undefined ? undefined : h.partitions.find((q) => (d.newest[q] ?? -1) >= 0);
    if (d === undefined || p === undefined) out.push({ check: 'sub-liveness', impossible: 'no subscription drain after healing, or nothing to consume' });
    else {
      const c = copy(h);
      c.subDrain!.committed[p] = d.newest[p]! - 1;
      out.push({ check: 'sub-liveness', description: `the drain's committed cursor of partition ${p} made one short of the newest offset`, history: c });
    }
  }
  // cursor: a later read made to answer BEGIN after an earlier read had answered a committed offset.
  {
    let found: { r: number; p: string; from: CursorRead } | undefined;
    outer: for (const a of h.cursorReads) {
      for (const [p, o] of Object.entries(a.cursors)) {
        if (o < 0) continue;
        const r = h.cursorReads.findIndex((b) => b.invoke > a.complete && b.cursors[p] !== undefined);
        if (r >= 0) {
          found = { r, p, from: a };
          break outer;
        }
      }
    }
    if (found === undefined) out.push({ check: 'cursor', impossible: 'no committed cursor was read before another read' });
    else {
      const c = copy(h);
      const b = c.cursorReads[found.r]!;
      const was = b.cursors[found.p];
      b.cursors[found.p] = found.from.cursors[found.p]! - 1;
      out.push({ check: 'cursor', description: `partition ${found.p}: read on node ${b.node} at ${b.invoke.toFixed(0)} ms made to answer ${b.cursors[found.p]} instead of ${was}, after a read had answered ${found.from.cursors[found.p]}`, history: c });
    }
  }
  return out;
}
