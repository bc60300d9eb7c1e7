/**
 * The data workload's nemesis: faults one at a time and two at once, on a schedule drawn from the seed
 * (kinds, targets, hold and rest times), as nemesis.ts does for the metadata test.
 *
 * Kinds: kill (-9, then cluster/up), pause (SIGSTOP/SIGCONT), partition (one node cut off from both
 * others, src/testing/partition.ts), bridge (two nodes cut from each other, both still reaching the
 * third, net-cut.ts), restart (SIGTERM, down for the hold time, cluster/up), kill-all (-9 of every
 * node at once, then cluster/up: acknowledged events were fsynced on a majority, so none may be lost).
 * A combined step is two faults on two different nodes at once (at most one of them on the network).
 *
 * Targets: a random node, the metadata leader (GET /cluster), or the leader of one of the event type's
 * partitions: the newest leader any node lists in GET /cluster's partitions, or, when none does, the
 * nodes' logs ("partition leader changed" lines: the leader of the highest term seen). Targets are
 * resolved when a step starts; which node leads then is not up to the seed.
 */
import { closeSync, openSync, readSync, fstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Prng } from '../src/sim/prng.js';
import { isolate, partitionUnsupported, type Partition } from '../src/testing/partition.js';
import { sleep, type LocalCluster } from './cluster-control.js';
import type { FaultLog } from './data-history.js';
import { cutBetween } from './net-cut.js';

export type DataFaultKind = 'kill' | 'pause' | 'partition' | 'bridge' | 'restart' | 'kill-all';
export type DataTarget = 'node' | 'meta-leader' | 'part-leader';

export interface DataFault {
  kind: DataFaultKind;
  target: DataTarget;
  /** The node when target is 'node' (and the fallback when a leader is unknown). */
  node: number;
  /** Which partition's leader, for 'part-leader'. */
  partition: number;
  /** Bridge: which of the two other nodes is the other end (0 or 1). */
  other: number;
}

export interface DataStep {
  faults: DataFault[];
  holdMs: number;
  gapMs: number;
}

const singleKinds: DataFaultKind[] = ['kill', 'kill', 'kill', 'pause', 'pause', 'partition', 'partition', 'bridge', 'bridge', 'restart', 'kill-all'];

export function planDataFaults(rnd: Prng, count: number, partitions: number): DataStep[] {
  const fault = (kinds: readonly DataFaultKind[]): DataFault => {
    const kind = kinds[rnd.int(kinds.length)]!;
    const t = rnd.next();
    const target: DataTarget = t < 0.45 ? 'part-leader' : t < 0.65 ? 'meta-leader' : 'node';
    return { kind, target, node: 1 + rnd.int(3), partition: rnd.int(partitions), other: rnd.int(2) };
  };
  return Array.from({ length: count }, () => {
    const combined = rnd.next() < 0.3;
    const faults = combined ? [fault(['kill', 'pause', 'partition']), fault(['kill', 'pause'])] : [fault(singleKinds)];
    // As the metadata test: long enough for elections and timeouts (2 s), short enough for several per run.
    return { faults, holdMs: 1500 + rnd.int(3500), gapMs: 1000 + rnd.int(2500) };
  });
}

/** Partition leaders as GET /cluster lists them, or as the nodes log them: per partition, the leader of the highest term. */
export class LeaderWatch {
  readonly #offsets = new Map<number, number>();
  readonly #rest = new Map<number, string>();
  readonly #byPartition = new Map<number, { term: number; leader: number }>();

  constructor(
    private readonly cluster: LocalCluster,
    private readonly eventType: string,
  ) {}

  poll(): void {
    for (const i of this.cluster.nodes) {
      const f = join(this.cluster.dir, `node${i}`, 'node.log');
      let fd: number;
      try {
        fd = openSync(f, 'r');
      } catch {
        continue;
      }
      try {
        const size = fstatSync(fd).size;
        const from = this.#offsets.get(i) ?? 0;
        if (size <= from) continue;
        const buf = Buffer.allocUnsafe(size - from);
        const n = readSync(fd, buf, 0, buf.length, from);
        this.#offsets.set(i, from + n);
        const text = (this.#rest.get(i) ?? '') + buf.subarray(0, n).toString('utf8');
        const lines = text.split('\n');
        this.#rest.set(i, lines.pop() ?? '');
        for (const l of lines) {
          if (!l.includes('partition leader changed')) continue;
          try {
            const j = JSON.parse(l) as { partition?: number; term?: number; leader?: number | null };
            if (typeof j.partition !== 'number' || typeof j.term !== 'number' || typeof j.leader !== 'number') continue;
            const have = this.#byPartition.get(j.partition);
            if (have === undefined || j.term > have.term) this.#byPartition.set(j.partition, { term: j.term, leader: j.leader });
          } catch {
            // a torn line
          }
        }
      } finally {
        closeSync(fd);
      }
    }
  }

  /**
   * The leader of a partition: the newest (highest term) any node names in GET /cluster's partition
   * list; the nodes' logs when no node answers with one (a version without the list, or no quorum).
   */
  async leaderOf(partition: number): Promise<number | undefined> {
    return (await this.known()).get(partition)?.leader;
  }

  /** Every partition's (term, leader), as leaderOf finds them. */
  async known(): Promise<Map<number, { term: number; leader: number }>> {
    this.poll();
    const out = new Map(this.#byPartition);
    const views = await Promise.all(this.cluster.nodes.map((i) => this.#partitionsOf(i)));
    const fromCluster = new Map<number, { term: number; leader: number }>();
    for (const v of views) {
      for (const p of v ?? []) {
        if (p.leader === null || p.term === null) continue;
        const k = Number(p.partition);
        const have = fromCluster.get(k);
        if (have === undefined || p.term > have.term) fromCluster.set(k, { term: p.term, leader: p.leader });
      }
    }
    for (const [k, v] of fromCluster) out.set(k, v);
    return out;
  }

  async #partitionsOf(i: number): Promise<{ partition: string; leader: number | null; term: number | null }[] | undefined> {
    try {
      const res = await fetch(`${this.cluster.url(i)}/cluster`, { signal: AbortSignal.timeout(500) });
      if (!res.ok) return undefined;
      const v = (await res.json()) as { partitions?: { event_type: string; partition: string; leader: number | null; term: number | null }[] };
      return v.partitions?.filter((p) => p.event_type === this.eventType);
    } catch {
      return undefined;
    }
  }
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

export class DataNemesis {
  readonly done: FaultLog[] = [];
  readonly skipped: string[] = [];
  /** Nodes cluster/up had to start although no fault had stopped them: they crashed. */
  readonly unexpected: string[] = [];
  #stopped = false;
  readonly #netProblem = partitionUnsupported();

  constructor(
    private readonly cluster: LocalCluster,
    private readonly leaders: LeaderWatch,
  ) {
    if (this.#netProblem !== undefined) console.log(`nemesis: partitions and bridges are skipped here (${this.#netProblem})`);
  }

  stop(): void {
    this.#stopped = true;
  }

  async run(plan: readonly DataStep[], stopAt: number): Promise<void> {
    await this.#wait(1500);
    for (const step of plan) {
      if (this.#stopped || performance.now() + step.holdMs > stopAt) break;
      await this.#step(step);
      if (this.#stopped) break;
      await this.#wait(step.gapMs);
    }
  }

  async #wait(ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (!this.#stopped && performance.now() < until) await sleep(Math.min(100, until - performance.now()));
  }

  /** Sends a signal; a node that is not running (it crashed) is noted and its fault skipped. */
  #signal(node: number, pid: number, sig: NodeJS.Signals, kind: string): boolean {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      this.skipped.push(`${kind} of node ${node}: not running (pid ${pid})`);
      return false;
    }
  }

  async #resolve(f: DataFault): Promise<number> {
    if (f.target === 'part-leader') return (await this.leaders.leaderOf(f.partition)) ?? f.node;
    if (f.target === 'meta-leader') {
      for (const i of this.cluster.nodes) {
        const v = await this.cluster.view(i, 500);
        if (v?.role === 'leader') return i;
      }
    }
    return f.node;
  }

  async #step(step: DataStep): Promise<void> {
    const faults = step.faults.filter((f) => {
      if ((f.kind === 'partition' || f.kind === 'bridge') && this.#netProblem !== undefined) {
        this.skipped.push(`${f.kind} (${this.#netProblem})`);
        return false;
      }
      return true;
    });
    if (faults.length === 0) return;
    // Nodes: the first fault's target; the second fault takes another node (its own target if free).
    const used: number[] = [];
    const placed: { f: DataFault; node: number }[] = [];
    for (const f of faults) {
      let node = await this.#resolve(f);
      if (used.includes(node)) node = this.cluster.nodes.filter((i) => !used.includes(i))[f.other % 2]!;
      used.push(node);
      placed.push({ f, node });
    }
    const start = performance.now();
    const combined = placed.length > 1;
    const logs: FaultLog[] = [];
    const undo: (() => void)[] = [];
    let restartNeeded = false;
    const expectedDown = new Set<number>();
    try {
      for (const { f, node } of placed) {
        const pid = this.cluster.pidOf(node);
        if (pid === undefined) {
          this.skipped.push(`${f.kind} of node ${node}: no pid`);
          continue;
        }
        const log: FaultLog = { kind: f.kind, nodes: [node], target: `${f.target === 'part-leader' ? `leader of partition ${f.partition}` : f.target === 'meta-leader' ? 'metadata leader' : 'node'}${combined ? ' (combined)' : ''}`, startMs: start, endMs: NaN };
        switch (f.kind) {
          case 'kill':
            if (!this.#signal(node, pid, 'SIGKILL', f.kind)) continue;
            restartNeeded = true;
            expectedDown.add(node);
            break;
          case 'kill-all': {
            const pids = this.cluster.nodes.map((i) => this.cluster.pidOf(i)).filter((p): p is number => p !== undefined);
            for (const p of pids) {
              try {
                process.kill(p, 'SIGKILL');
              } catch {
                // not running (a crash; cluster/up reports it)
              }
            }
            log.nodes = [...this.cluster.nodes];
            restartNeeded = true;
            for (const i of this.cluster.nodes) expectedDown.add(i);
            break;
          }
          case 'restart': {
            if (!this.#signal(node, pid, 'SIGTERM', f.kind)) continue;
            restartNeeded = true;
            expectedDown.add(node);
            const until = performance.now() + 10_000;
            while (alive(pid) && performance.now() < until) await sleep(50);
            if (alive(pid)) {
              log.note = 'did not exit within 10 s of SIGTERM; killed';
              process.kill(pid, 'SIGKILL');
            } else {
              log.note = `exited ${((performance.now() - start) / 1000).toFixed(1)} s after SIGTERM`;
            }
            break;
          }
          case 'pause':
            if (!this.#signal(node, pid, 'SIGSTOP', f.kind)) continue;
            undo.push(() => process.kill(pid, 'SIGCONT'));
            break;
          case 'partition': {
            let p: Partition;
            try {
              const peers = this.cluster.nodes.filter((j) => j !== node).map((j) => this.cluster.raftPort(j));
              p = isolate(node, pid, this.cluster.httpPort(node), this.cluster.raftPort(node), peers);
            } catch (err) {
              const why = (err as Error).message.split('\n')[0];
              console.log(`nemesis: partition of node ${node} FAILED, skipped: ${why}`);
              this.skipped.push(`partition of node ${node} (${why})`);
              continue;
            }
            undo.push(() => p.heal());
            break;
          }
          case 'bridge': {
            const others = this.cluster.nodes.filter((j) => j !== node);
            const end = others[f.other % others.length]!;
            const endPid = this.cluster.pidOf(end);
            let p: Partition;
            try {
              if (endPid === undefined) throw new Error(`no pid for node ${end}`);
              p = cutBetween({ id: node, pid, raftPort: this.cluster.raftPort(node) }, { id: end, pid: endPid, raftPort: this.cluster.raftPort(end) });
            } catch (err) {
              const why = (err as Error).message.split('\n')[0];
              console.log(`nemesis: bridge cut ${node}-${end} FAILED, skipped: ${why}`);
              this.skipped.push(`bridge ${node}-${end} (${why})`);
              continue;
            }
            log.nodes = [node, end];
            log.note = `${node} and ${end} cut from each other, ${others.find((j) => j !== end)} bridges`;
            undo.push(() => p.heal());
            break;
          }
        }
        logs.push(log);
        console.log(`nemesis: ${f.kind} node ${log.nodes.join('+')} (${log.target}) for ${step.holdMs} ms at ${(start / 1000).toFixed(1)} s`);
      }
      this.done.push(...logs);
      await this.#wait(step.holdMs);
    } finally {
      // Continue and heal first: cluster/up waits for every node to agree on a leader.
      for (const u of undo) {
        try {
          u();
        } catch {
          // already undone (the process exited)
        }
      }
      try {
        if (restartNeeded) {
          const out = await this.cluster.up();
          for (const l of out.split('\n')) {
            const m = /^node (\d+): started/.exec(l);
            if (m !== null && !expectedDown.has(Number(m[1]))) this.unexpected.push(`crash: node ${m[1]} had exited on its own (found when restarting after ${logs.map((x) => x.kind).join('+')})`);
          }
        }
      } finally {
        const end = performance.now();
        for (const l of logs) l.endMs = end;
      }
    }
  }
}
