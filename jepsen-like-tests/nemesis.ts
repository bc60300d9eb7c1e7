/**
 * The nemesis: one fault at a time on a schedule drawn from the seed (which fault, whom, how long,
 * the pause after), so a failing run's schedule replays with --seed. Targets named "leader" are
 * resolved when the fault starts (who leads then is not up to the seed). Every fault is undone in a
 * finally block: a killed node is restarted with cluster/up (which starts only the nodes that are
 * down), a stopped one continued, a partition healed. One at a time keeps a majority available most
 * of the time, so the history holds plenty of completed operations around each fault.
 */
import type { Prng } from '../src/sim/prng.js';
import { sleep, type LocalCluster } from './cluster-control.js';
import { isolate, partitionUnsupported, type Partition } from '../src/testing/partition.js';

export type FaultKind = 'kill' | 'pause' | 'partition';

export interface PlannedFault {
  kind: FaultKind;
  target: 'leader' | number;
  holdMs: number;
  gapMs: number;
}

/** Times are performance.now() of the test process, the clock of the history's operations. */
export interface FaultRecord {
  kind: FaultKind;
  node: number;
  target: 'leader' | number;
  startMs: number;
  endMs: number;
  note?: string;
}

export function planFaults(rnd: Prng, count: number): PlannedFault[] {
  const kinds: FaultKind[] = ['kill', 'pause', 'partition'];
  return Array.from({ length: count }, () => {
    const kind = kinds[rnd.int(kinds.length)]!;
    // The leader about a third of the time: the fault that exercises elections and lost leadership.
    const target: 'leader' | number = rnd.next() < 0.35 ? 'leader' : 1 + rnd.int(3);
    // Long enough for an election (10 ticks of 100 ms) and for writes to time out (2 s), short
    // enough that several faults fit in a bounded run.
    return { kind, target, holdMs: 1500 + rnd.int(3500), gapMs: 1000 + rnd.int(2500) };
  });
}

export class Nemesis {
  readonly done: FaultRecord[] = [];
  readonly skipped: string[] = [];
  /** Nodes that cluster/up had to start although the nemesis had not killed them: they crashed. */
  readonly unexpected: string[] = [];
  #stopped = false;
  readonly #partitionProblem = partitionUnsupported();

  constructor(private readonly cluster: LocalCluster) {
    if (this.#partitionProblem !== undefined) console.log(`nemesis: partitions are skipped here (${this.#partitionProblem})`);
  }

  stop(): void {
    this.#stopped = true;
  }

  /** Runs the plan until stop() or until `stopAt`; the last fault is always undone before returning. */
  async run(plan: readonly PlannedFault[], stopAt: number): Promise<void> {
    await this.#wait(1500); // some fault-free history first
    for (const f of plan) {
      if (this.#stopped || performance.now() + f.holdMs > stopAt) break;
      await this.#inject(f);
      if (this.#stopped) break;
      await this.#wait(f.gapMs);
    }
  }

  /** Sleeps up to ms, returning early once stopped (an interrupted run still undoes its fault at once). */
  async #wait(ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (!this.#stopped && performance.now() < until) await sleep(Math.min(100, until - performance.now()));
  }

  async #resolve(target: 'leader' | number): Promise<number> {
    if (target !== 'leader') return target;
    for (const i of this.cluster.nodes) {
      const v = await this.cluster.view(i);
      if (v?.role === 'leader') return i;
    }
    return 1; // no leader right now: any node will do
  }

  async #inject(f: PlannedFault): Promise<void> {
    if (f.kind === 'partition' && this.#partitionProblem !== undefined) {
      this.skipped.push(`partition (${this.#partitionProblem})`);
      return;
    }
    const node = await this.#resolve(f.target);
    const pid = this.cluster.pidOf(node);
    if (pid === undefined) {
      this.skipped.push(`${f.kind} of node ${node}: no pid`);
      return;
    }
    const rec: FaultRecord = { kind: f.kind, node, target: f.target, startMs: performance.now(), endMs: NaN };
    console.log(`nemesis: ${f.kind} node ${node}${f.target === 'leader' ? ' (leader)' : ''} for ${f.holdMs} ms at ${(rec.startMs / 1000).toFixed(1)} s`);
    let partition: Partition | undefined;
    try {
      switch (f.kind) {
        case 'kill':
          process.kill(pid, 'SIGKILL');
          break;
        case 'pause':
          process.kill(pid, 'SIGSTOP');
          break;
        case 'partition':
          try {
            const peers = this.cluster.nodes.filter((j) => j !== node).map((j) => this.cluster.raftPort(j));
            partition = isolate(node, pid, this.cluster.httpPort(node), this.cluster.raftPort(node), peers);
          } catch (err) {
            // e.g. no cgroup match in this kernel's iptables: skip this fault, loudly, and go on.
            const why = (err as Error).message.split('\n')[0];
            console.log(`nemesis: partition of node ${node} FAILED, skipped: ${why}`);
            this.skipped.push(`partition of node ${node} (${why})`);
            return;
          }
          break;
      }
      this.done.push(rec);
      await this.#wait(f.holdMs);
    } finally {
      await this.#undo(f.kind, node, pid, partition, rec);
    }
  }

  async #undo(kind: FaultKind, node: number, pid: number, partition: Partition | undefined, rec: FaultRecord): Promise<void> {
    try {
      if (kind === 'pause') process.kill(pid, 'SIGCONT');
      if (partition !== undefined) partition.heal();
      if (kind === 'kill') {
        const out = await this.cluster.up();
        rec.note = out.split('\n').find((l) => l.startsWith(`node ${node}:`));
        for (const l of out.split('\n')) {
          if (/: started/.test(l) && !l.startsWith(`node ${node}:`)) this.unexpected.push(`crash: ${l.split(' (')[0]} had exited on its own (found when restarting node ${node})`);
        }
      }
    } finally {
      rec.endMs = performance.now();
    }
  }
}
