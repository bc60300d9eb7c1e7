/**
 * The deterministic cluster simulation (in the spirit of Kafka's RaftEventSimulationTest and
 * TigerBeetle's VOPR): real Raft cores, a virtual clock, a priority queue of events and one seeded
 * generator from which every choice is drawn, so a seed replays exactly.
 *
 * A run alternates chaos and calm. During chaos a nemesis partitions the network (symmetric, one-way,
 * bridge), makes links lossy, duplicating and slow, crashes nodes (one, the leader, or all at once)
 * and restarts them from their simulated disks; an operator changes membership one server at a time
 * (add learner, promote, remove, wipe-and-rejoin under a new id) and transfers leadership; clients
 * write and read keys through random nodes. During calm every fault is healed and the run checks
 * liveness: a leader must emerge and a fresh proposal must be applied by every running member within
 * a bounded number of ticks. The Raft invariants (invariants.ts) are checked after every event, and
 * at the end the clients' history is checked for linearizability.
 */
import { InvariantError } from '../core/assert.js';
import type { Message, NodeId, Ready } from '../raft/index.js';
import { bootstrapState } from '../raft/index.js';
import { MinHeap } from './heap.js';
import { Invariants, InvariantViolation } from './invariants.js';
import type { KvOp } from './linearizability.js';
import { checkLinearizable } from './linearizability.js';
import { encodeWrite } from './kv.js';
import { Network } from './network.js';
import type { NodeTuning } from './node.js';
import { SimNode } from './node.js';
import { Prng } from './prng.js';

export interface SimOptions {
  readonly seed: number;
  /** Record a line per event (slower); a failing seed is replayed with tracing on. */
  readonly trace?: boolean;
  /** Chaos/calm rounds per run. */
  readonly rounds?: number;
  /** Virtual milliseconds of chaos per round. */
  readonly chaosMs?: number;
  /**
   * Deliberately broken reads (served from the local state machine without ReadIndex), to show
   * that the linearizability checker catches stale reads. Never set outside that test.
   */
  readonly staleReads?: boolean;
  /**
   * Check the rules (VoteQuorum, CommitOwnTerm, ConfChangeOneAtATime) as well as their consequences
   * (default). Off, the mutant run measures how often the consequences alone catch a broken rule.
   */
  readonly ruleChecks?: boolean;
}

export interface SimStats {
  events: number;
  messages: number;
  elections: number;
  writesOk: number;
  writesUnknown: number;
  readsOk: number;
  crashes: number;
  confChanges: number;
  transfers: number;
  snapshotsSent: number;
  /** Longest time from the end of chaos to a proposal applied everywhere (virtual ms). */
  recoveryMsMax: number;
  virtualMs: number;
}

export interface SimResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly trace: readonly string[];
  readonly stats: SimStats;
}

type SimEvent =
  | { kind: 'tick'; node: NodeId; inc: number }
  | { kind: 'deliver'; msg: Message }
  | { kind: 'persisted'; node: NodeId; inc: number; rd: Ready }
  | { kind: 'restart'; node: NodeId; inc: number }
  | { kind: 'client'; client: number }
  | { kind: 'clientTimeout'; client: number; opSeq: number }
  | { kind: 'nemesis' }
  | { kind: 'operator' }
  | { kind: 'calmProbe'; round: number }
  | { kind: 'flap'; node: NodeId; heal: boolean };

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly ev: SimEvent;
}

interface PendingOp {
  readonly opSeq: number;
  readonly client: number;
  readonly kind: 'write' | 'read';
  readonly key: string;
  readonly value: string | undefined;
  readonly invoke: number;
  readonly node: NodeId;
  readonly inc: number;
  /** Writes: the proposal's position. */
  readonly index: number;
  readonly term: number;
  /** Reads: the context and, once known, the read index. */
  readonly context: string;
  readIndex: number | undefined;
}

type Intent =
  | { kind: 'addLearner'; id: NodeId; thenPromote: boolean }
  | { kind: 'promote'; id: NodeId }
  | { kind: 'remove'; id: NodeId; wipe: boolean };

const tickMs = 10;
/** Liveness bound after faults heal: a leader and a committed proposal everywhere within this many ticks. */
export const recoveryTicksMax = 200;
const clientTimeoutMsMin = 200;
const diskMsMaxCalm = 3;
const keys = ['a', 'b', 'c'];

export class Simulation {
  readonly seed: number;
  readonly #opts: SimOptions;
  readonly #rng: Prng;
  readonly #net = new Network();
  readonly #inv: Invariants;
  readonly #queue = new MinHeap<Scheduled>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  readonly #nodes = new Map<NodeId, SimNode>();
  readonly #tuning: NodeTuning;
  readonly #trace: string[] = [];
  readonly #tracing: boolean;
  readonly #history: KvOp[] = [];
  readonly #pending = new Map<number, PendingOp>(); // by client
  #now = 0;
  #seq = 0;
  #histSeq = 0;
  #opSeq = 0;
  #nextNodeId: NodeId;
  #chaos = true;
  /** Per-node upper bound of a durable write's latency; the nemesis makes some disks slow. */
  readonly #diskMsMax = new Map<NodeId, number>();
  /** During a round of chaos: the share of fsyncs that take a latency spike, and how long at most. */
  #spikeRate = 0;
  #spikeMsMax = 0;
  #intent: Intent | undefined;
  /** The latest membership changes leaders accepted (for ConfChangeOneAtATime). */
  readonly #acceptedConfChanges: { index: number; term: number }[] = [];
  /** Probability that a new leader is cut off shortly after its election (during chaos). */
  readonly #flapRate: number;
  #calm: { round: number; since: number; marker: { index: number; term: number; leader: NodeId } | undefined } | undefined;
  readonly #clients: number;
  readonly stats: SimStats = {
    events: 0,
    messages: 0,
    elections: 0,
    writesOk: 0,
    writesUnknown: 0,
    readsOk: 0,
    crashes: 0,
    confChanges: 0,
    transfers: 0,
    snapshotsSent: 0,
    recoveryMsMax: 0,
    virtualMs: 0,
  };

  constructor(opts: SimOptions) {
    this.seed = opts.seed;
    this.#opts = opts;
    this.#rng = new Prng(opts.seed);
    this.#inv = new Invariants({ rules: opts.ruleChecks ?? true });
    this.#tracing = opts.trace === true;
    const r = this.#rng;
    const electionTicks = r.between(8, 15);
    this.#tuning = {
      electionTicks,
      heartbeatTicks: r.between(1, 3),
      appendEntriesMax: r.pick([1, 2, 4, 64]),
      appendBytesMax: r.pick([32, 256, 4096]),
      inflightAppendsMax: r.pick([1, 2, 8]),
      readyCommittedBytesMax: r.pick([64, 1024, 1 << 20]),
      uncommittedBytesMax: r.pick([512, 1 << 20]),
      snapshotEvery: r.pick([8, 30, 100]),
      keepEntries: r.pick([0, 5, 20]),
      preVote: r.chance(0.7),
      checkQuorum: r.chance(0.7),
      // From the seed, not drawn: a draw here would change every seed's schedule after it.
      heartbeatWhileReplicating: opts.seed % 2 === 0,
    };
    this.#flapRate = r.pick([0, 0.2, 0.5]);
    const founders = r.chance(0.5) ? [1, 2, 3] : [1, 2, 3, 4, 5];
    this.#nextNodeId = founders.length + 1;
    this.#inv.bootstrapped(bootstrapState(founders).entries);
    for (const id of founders) this.#addNode(id, founders);
    this.#clients = r.between(2, 4);
    this.#log(`seed ${opts.seed}: founders ${founders.join(',')} tuning ${JSON.stringify(this.#tuning)}`);
  }

  // -------------------------------------------------------------------------------------------
  // Scheduling

  #at(delayMs: number, ev: SimEvent): void {
    this.#queue.push({ at: this.#now + delayMs, seq: this.#seq++, ev });
  }

  #log(line: string): void {
    if (this.#tracing) this.#trace.push(`${String(this.#now).padStart(7)} ${line}`);
  }

  #addNode(id: NodeId, founders: readonly NodeId[] | undefined): SimNode {
    const node = new SimNode(id, this.#tuning, this.#rng.fork(), founders);
    this.#nodes.set(id, node);
    this.#at(this.#rng.between(1, tickMs), { kind: 'tick', node: id, inc: node.incarnation });
    return node;
  }

  run(): SimResult {
    const rounds = this.#opts.rounds ?? 2;
    const chaosMs = this.#opts.chaosMs ?? 3000;
    try {
      for (let c = 0; c < this.#clients; c++) this.#at(this.#rng.between(50, 200), { kind: 'client', client: c });
      for (let round = 0; round < rounds; round++) {
        this.#chaos = true;
        this.#spikeRate = this.#rng.pick([0.02, 0.05, 0.1, 0.2]);
        this.#spikeMsMax = this.#rng.pick([60, 150]);
        const chaosEnd = this.#now + chaosMs;
        this.#at(this.#rng.between(100, 300), { kind: 'nemesis' });
        this.#at(this.#rng.between(100, 400), { kind: 'operator' });
        this.#runUntil(chaosEnd);
        this.#beginCalm(round);
        const deadline = this.#now + recoveryTicksMax * tickMs;
        this.#runUntil(deadline, () => this.#calm === undefined);
        if (this.#calm !== undefined) {
          throw new InvariantViolation(
            'Liveness',
            `no proposal applied by every member within ${recoveryTicksMax} ticks of healing (round ${round})`,
          );
        }
      }
      this.#finishClients();
      const lin = checkLinearizable(this.#history);
      if (!lin.ok) {
        throw new InvariantViolation(
          'Linearizability',
          `history of key ${lin.badKey} has no linearization (${this.#history.length} ops, ${lin.explored} states explored)\n${this.#describeKey(lin.badKey)}`,
        );
      }
      this.stats.virtualMs = this.#now;
      return { seed: this.seed, ok: true, trace: this.#trace, stats: this.stats };
    } catch (e) {
      if (!(e instanceof InvariantViolation) && !(e instanceof InvariantError)) throw e;
      this.stats.virtualMs = this.#now;
      this.#log(`FAILED ${e.message}`);
      return { seed: this.seed, ok: false, error: `${e.name}: ${e.message}`, trace: this.#trace, stats: this.stats };
    }
  }

  #describeKey(key: string | undefined): string {
    return this.#history
      .filter((op) => op.key === key)
      .sort((a, b) => a.invoke - b.invoke)
      .map((op) => `  c${op.client} ${op.kind} ${op.value ?? '∅'} [${op.invoke}, ${op.complete}]`)
      .join('\n');
  }

  #runUntil(end: number, done?: () => boolean): void {
    for (;;) {
      if (done !== undefined && done()) return;
      const next = this.#queue.peek();
      if (next === undefined || next.at > end) {
        this.#now = end;
        return;
      }
      this.#queue.pop();
      this.#now = next.at;
      this.stats.events++;
      this.#handle(next.ev);
    }
  }

  #handle(ev: SimEvent): void {
    switch (ev.kind) {
      case 'tick': {
        const node = this.#nodes.get(ev.node)!;
        if (!node.running || node.incarnation !== ev.inc) return;
        node.raw!.tick();
        this.#pump(node);
        this.#at(tickMs, ev);
        return;
      }
      case 'deliver':
        this.#deliver(ev.msg);
        return;
      case 'persisted': {
        const node = this.#nodes.get(ev.node)!;
        if (!node.running || node.incarnation !== ev.inc) return; // the crash lost this write
        this.#completeReady(node, ev.rd);
        return;
      }
      case 'restart': {
        const node = this.#nodes.get(ev.node)!;
        if (node.running || node.destroyed || node.incarnation !== ev.inc) return;
        this.#restart(node);
        return;
      }
      case 'client':
        this.#clientStep(ev.client);
        return;
      case 'clientTimeout':
        this.#clientTimeout(ev.client, ev.opSeq);
        return;
      case 'nemesis':
        if (!this.#chaos) return;
        this.#nemesis();
        this.#at(this.#rng.between(50, 400), ev);
        return;
      case 'operator':
        if (!this.#chaos) return;
        this.#operator();
        this.#at(this.#rng.between(50, 400), ev);
        return;
      case 'calmProbe':
        this.#calmProbe(ev.round);
        return;
      case 'flap':
        if (!this.#chaos) return;
        if (ev.heal) this.#net.rejoin(ev.node);
        else {
          this.#net.isolate(ev.node, [...this.#nodes.keys()]);
          this.#log(`NEMESIS flap: n${ev.node} cut off`);
          this.#at(this.#rng.between(50, 400), { kind: 'flap', node: ev.node, heal: true });
        }
        return;
    }
  }

  // -------------------------------------------------------------------------------------------
  // The host loop for one node (the Ready contract)

  #pump(node: SimNode): void {
    const raw = node.raw;
    if (raw === undefined) return;
    this.#observe(node);
    if (node.outstanding !== undefined || !raw.hasReady()) return;
    const rd = raw.ready();
    node.outstanding = rd;
    this.#inv.logMatching(node.id, rd.entries, raw);
    if (this.#tracing) this.#log(`n${node.id} ready ${describeReady(rd)}`);
    // A durable write takes a while (an fsync); a crash before it completes loses the Ready.
    const slowest = this.#diskMsMax.get(node.id) ?? diskMsMaxCalm;
    const spike = rd.mustSync && this.#spikeRate > 0 && this.#rng.chance(this.#spikeRate);
    const delay = spike ? this.#rng.between(10, this.#spikeMsMax) : rd.mustSync ? this.#rng.between(1, slowest) : this.#rng.between(0, 1);
    this.#at(delay, { kind: 'persisted', node: node.id, inc: node.incarnation, rd });
  }

  #completeReady(node: SimNode, rd: Ready): void {
    const raw = node.raw!;
    node.persist(rd);
    for (const m of rd.messages) this.#send(m);
    if (rd.snapshot !== undefined) {
      node.installSnapshot(rd);
      this.#inv.stateMachineSafety(node.id, node.kv.applied, node.kv.hash);
      this.#log(`n${node.id} installed snapshot ${rd.snapshot.metadata.index}@${rd.snapshot.metadata.term}`);
    }
    for (const e of rd.committedEntries) {
      node.applyEntry(e);
      this.#inv.stateMachineSafety(node.id, e.index, node.kv.hash);
      if (e.type === 'confChange') {
        this.#log(`n${node.id} applied conf change ${e.index}: voters ${node.conf.voters.join(',')} learners ${node.conf.learners.join(',')}`);
      }
      this.#onApplied(node, e.index, e.term);
    }
    for (const rs of rd.readStates) this.#onReadState(node, rs.context, rs.index);
    raw.advance(rd);
    node.outstanding = undefined;
    node.maybeCompact();
    this.#serveReads(node);
    this.#pump(node);
  }

  /** Checks run after every event that touched `node`. */
  #observe(node: SimNode): void {
    const raw = node.raw!;
    const st = raw.status();
    if (st.state === 'leader') {
      this.#inv.electionSafety(node.id, st.term);
      if (node.ledTerm !== st.term) {
        this.stats.elections++;
        this.#log(`n${node.id} became leader of term ${st.term} (last index ${st.lastIndex}, commit ${st.commit})`);
        this.#inv.leaderCompleteness(node.id, st.term, raw);
        this.#inv.voteQuorum(node.id, st.term, st.confState.voters);
        // Short-lived leaders: cut off soon after election, a leader leaves entries of its term on
        // some followers only (the divergent logs of figure 8).
        if (this.#chaos && this.#rng.chance(this.#flapRate)) this.#at(this.#rng.between(1, 30), { kind: 'flap', node: node.id, heal: false });
      }
      this.#inv.leaderCommitRule(node.id, st.term, st.commit, raw);
      this.#inv.leaderCommitted(node.id, st.term, st.commit, raw);
    } else {
      // A leader that committed its own removal steps down in the event that committed it (see
      // GroupWatch.observe): its commit index of the term it led is still a leader's.
      if (node.ledTerm === st.term) {
        this.#inv.leaderCommitRule(node.id, st.term, st.commit, raw);
        this.#inv.leaderCommitted(node.id, st.term, st.commit, raw);
      }
      this.#inv.notLeader(node.id);
      if (st.state === 'candidate' && st.votes !== undefined) this.#inv.voteTally(node.id, st.term, st.votes);
    }
    node.ledTerm = st.state === 'leader' ? st.term : undefined;
    this.#inv.committedPrefix(node.id, st.commit, raw);
  }

  #send(m: Message): void {
    this.stats.messages++;
    if (m.type === 'snap') this.stats.snapshotsSent++;
    for (const d of this.#net.delays(this.#rng, m.from)) this.#at(d, { kind: 'deliver', msg: m });
  }

  #deliver(m: Message): void {
    const node = this.#nodes.get(m.to);
    if (node === undefined || !node.running) return;
    if (!this.#net.canDeliver(m.from, m.to)) return;
    if (this.#tracing) this.#log(`n${m.to} <- n${m.from} ${describeMessage(m)}`);
    if (m.type === 'voteResp' && !m.reject) this.#inv.voteGranted(m.to, m.from, m.term);
    node.raw!.step(m);
    this.#pump(node);
  }

  #crash(node: SimNode, restartAfterMs: number | undefined): void {
    if (!node.running) return;
    this.stats.crashes++;
    this.#log(`n${node.id} CRASH${restartAfterMs === undefined ? '' : ` (restart in ${restartAfterMs} ms)`}`);
    node.crash();
    this.#failOpsOn(node.id);
    if (restartAfterMs !== undefined) this.#at(restartAfterMs, { kind: 'restart', node: node.id, inc: node.incarnation });
  }

  #restart(node: SimNode): void {
    node.start();
    this.#log(`n${node.id} RESTART from disk: snapshot ${node.storage.snapshot().metadata.index}, last ${node.storage.lastIndex()}, ${JSON.stringify(node.storage.hardState())}`);
    this.#at(this.#rng.between(1, tickMs), { kind: 'tick', node: node.id, inc: node.incarnation });
    this.#pump(node);
  }

  // -------------------------------------------------------------------------------------------
  // Faults

  #live(): SimNode[] {
    return [...this.#nodes.values()].filter((n) => !n.destroyed);
  }

  #leader(): SimNode | undefined {
    let best: SimNode | undefined;
    let bestTerm = -1;
    for (const n of this.#nodes.values()) {
      if (!n.running) continue;
      const st = n.raw!.status();
      if (st.state === 'leader' && st.term > bestTerm) {
        best = n;
        bestTerm = st.term;
      }
    }
    return best;
  }

  #nemesis(): void {
    const r = this.#rng;
    const live = this.#live();
    const ids = live.map((n) => n.id);
    const action = r.pick([
      'partition',
      'partition',
      'oneWay',
      'bridge',
      'isolateLeader',
      'crash',
      'crash',
      'crashLeader',
      'crashAll',
      'flaky',
      'flaky',
      'slowDisk',
      'slowDisk',
      'storm',
      'slowSender',
      'heal',
      'heal',
    ] as const);
    switch (action) {
      case 'partition': {
        const shuffled = shuffle(r, ids);
        const cut = r.between(1, Math.max(1, shuffled.length - 1));
        this.#net.partition([shuffled.slice(0, cut), shuffled.slice(cut)]);
        break;
      }
      case 'oneWay':
        for (let k = r.between(1, 3); k > 0; k--) {
          const a = r.pick(ids);
          const b = r.pick(ids);
          if (a !== b) this.#net.cutOneWay(a, b);
        }
        break;
      case 'bridge': {
        if (ids.length < 3) break;
        const s = shuffle(r, ids);
        const mid = Math.floor((s.length - 1) / 2);
        this.#net.bridge(s.slice(1, 1 + mid), s[0]!, s.slice(1 + mid));
        break;
      }
      case 'isolateLeader': {
        const l = this.#leader();
        if (l !== undefined) this.#net.isolate(l.id, ids);
        break;
      }
      case 'crash':
        this.#crash(r.pick(live), r.between(10, 600));
        break;
      case 'crashLeader': {
        const l = this.#leader();
        if (l !== undefined) this.#crash(l, r.between(10, 600));
        break;
      }
      case 'crashAll': {
        const after = r.between(10, 300);
        for (const n of live) this.#crash(n, after + r.between(0, 50));
        break;
      }
      case 'flaky':
        this.#net.faults = {
          dropRate: r.pick([0, 0.05, 0.2, 0.4]),
          duplicateRate: r.pick([0, 0.05, 0.2]),
          delayMsMin: 1,
          delayMsMax: r.pick([3, 10, 40]),
          slowRate: r.pick([0, 0.05, 0.2]),
          replayRate: r.pick([0, 0, 0.05, 0.2]),
          replayMsMax: r.pick([300, 1500]),
        };
        break;
      case 'slowSender':
        this.#net.slowSenders.set(r.pick(ids), r.pick([100, 300, 600]));
        break;
      case 'storm': {
        // The leader is cut off for a moment (a live leader's followers would ignore the campaigns),
        // every follower campaigns at once and one answers late for a while: split votes, and answers
        // of one campaign reaching a later one.
        const l = this.#leader();
        if (l !== undefined) {
          this.#net.isolate(l.id, ids);
          this.#at(r.between(50, 300), { kind: 'flap', node: l.id, heal: true });
        }
        for (const n of live) {
          if (!n.running || n.raw!.status().state === 'leader') continue;
          n.raw!.campaign();
          this.#pump(n);
        }
        const others = ids.filter((id) => id !== l?.id);
        if (others.length > 0) this.#net.slowSenders.set(r.pick(others), r.pick([100, 300]));
        break;
      }
      case 'slowDisk': {
        const n = r.pick(live);
        this.#diskMsMax.set(n.id, r.pick([diskMsMaxCalm, 10, 30, 80]));
        break;
      }
      case 'heal':
        this.#net.heal();
        break;
    }
    this.#log(
      `NEMESIS ${action}: cuts [${this.#net.describeCuts()}] faults ${JSON.stringify(this.#net.faults)} slow senders ${JSON.stringify([...this.#net.slowSenders])} slow disks ${JSON.stringify([...this.#diskMsMax])}`,
    );
  }

  // -------------------------------------------------------------------------------------------
  // The operator: membership changes one server at a time, and leadership transfers

  #operator(): void {
    const r = this.#rng;
    const leader = this.#leader();
    if (leader === undefined) return;
    const raw = leader.raw!;
    const st = raw.status();
    const conf = st.confState;
    if (this.#intent === undefined) {
      const members = conf.voters.length + conf.learners.length;
      const choice = r.pick(['transfer', 'transfer', 'add', 'remove', 'wipe', 'nothing', 'nothing'] as const);
      if (choice === 'transfer') {
        const to = r.pick(conf.voters);
        if (raw.transferLeadership(to)) {
          this.stats.transfers++;
          this.#log(`OPERATOR transfer leadership n${leader.id} -> n${to}`);
          this.#pump(leader);
        }
        return;
      }
      if (choice === 'add' && members < 7) {
        const id = this.#nextNodeId++;
        this.#addNode(id, undefined);
        this.#intent = { kind: 'addLearner', id, thenPromote: r.chance(0.7) && conf.voters.length < 5 };
      } else if (choice === 'remove' && conf.voters.length > 3) {
        this.#intent = { kind: 'remove', id: r.pick([...conf.voters, ...conf.learners]), wipe: false };
      } else if (choice === 'remove' && conf.learners.length > 0) {
        this.#intent = { kind: 'remove', id: r.pick(conf.learners), wipe: false };
      } else if (choice === 'wipe' && conf.voters.length > 3) {
        this.#intent = { kind: 'remove', id: r.pick(conf.voters), wipe: true };
      } else {
        return;
      }
      this.#log(`OPERATOR intends ${JSON.stringify(this.#intent)}`);
    }
    this.#advanceIntent(leader);
  }

  #advanceIntent(leader: SimNode): void {
    const intent = this.#intent!;
    const raw = leader.raw!;
    const st = raw.status();
    const { voters, learners } = st.confState;
    let cc: { type: 'addVoter' | 'addLearner' | 'removeNode'; nodeId: NodeId } | undefined;
    switch (intent.kind) {
      case 'addLearner':
        if (learners.includes(intent.id) || voters.includes(intent.id)) {
          this.#intent = intent.thenPromote ? { kind: 'promote', id: intent.id } : undefined;
          return;
        }
        cc = { type: 'addLearner', nodeId: intent.id };
        break;
      case 'promote': {
        if (voters.includes(intent.id) || !learners.includes(intent.id)) {
          this.#intent = undefined;
          return;
        }
        // Promote only a learner that has caught up, so that the new majority can commit at once.
        const pr = st.progress?.get(intent.id);
        if (pr === undefined || pr.match + 5 < st.commit) return;
        cc = { type: 'addVoter', nodeId: intent.id };
        break;
      }
      case 'remove':
        if (!voters.includes(intent.id) && !learners.includes(intent.id)) {
          const gone = this.#nodes.get(intent.id);
          if (intent.wipe && gone !== undefined) {
            // Wipe and rejoin: the old identity is retired for good (a wiped disk has forgotten its
            // votes, so it must never vote under the old id again) and the server comes back empty
            // under a new id, first as a learner.
            gone.destroyed = true;
            this.#crash(gone, undefined);
            const id = this.#nextNodeId++;
            this.#addNode(id, undefined);
            this.#log(`OPERATOR wiped n${intent.id}; it rejoins as n${id}`);
            this.#intent = { kind: 'addLearner', id, thenPromote: true };
          } else {
            if (gone !== undefined && this.#rng.chance(0.5)) {
              gone.destroyed = true;
              this.#crash(gone, undefined);
            }
            this.#intent = undefined;
          }
          return;
        }
        if (intent.id === leader.id) {
          // A leader removing itself would leave the group leaderless for an election timeout;
          // hand over first, as an operator would.
          const to = voters.find((v) => v !== leader.id);
          if (to !== undefined && raw.transferLeadership(to)) this.#pump(leader);
          return;
        }
        cc = { type: 'removeNode', nodeId: intent.id };
        break;
    }
    const res = this.#proposeConfChange(leader, cc);
    if (res && this.#rng.chance(0.4)) {
      // A hasty operator sends the next change at once, before the first is applied: the leader
      // must refuse it (one change at a time).
      const next =
        cc.type === 'addLearner'
          ? { type: 'addVoter' as const, nodeId: cc.nodeId }
          : cc.type === 'removeNode' && voters.length > 4
            ? { type: 'removeNode' as const, nodeId: this.#rng.pick(voters.filter((v) => v !== cc.nodeId && v !== leader.id)) }
            : undefined;
      if (next !== undefined) this.#proposeConfChange(leader, next);
    }
    this.#pump(leader);
  }

  /**
   * Proposes a membership change and checks the rule it must obey (ConfChangeOneAtATime): the leader
   * accepts one only if no change it accepted earlier is still unapplied in its log.
   */
  #proposeConfChange(leader: SimNode, cc: { type: 'addVoter' | 'addLearner' | 'removeNode'; nodeId: NodeId }): boolean {
    const raw = leader.raw!;
    const applied = raw.status().applied;
    const res = raw.proposeConfChange(cc);
    this.#log(`OPERATOR propose ${cc.type} n${cc.nodeId} at n${leader.id}: ${res.ok ? `index ${res.lastIndex}` : res.reason}`);
    if (!res.ok) return false;
    this.stats.confChanges++;
    for (const p of this.#inv.rules ? this.#acceptedConfChanges : []) {
      if (p.index > applied && p.index < res.lastIndex && raw.termAt(p.index) === p.term) {
        throw new InvariantViolation('ConfChangeOneAtATime', `leader n${leader.id} accepted ${cc.type} n${cc.nodeId} at ${res.lastIndex} while the change at ${p.index} is unapplied (applied ${applied})`);
      }
    }
    this.#acceptedConfChanges.push({ index: res.lastIndex, term: res.term });
    if (this.#acceptedConfChanges.length > 8) this.#acceptedConfChanges.shift();
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Calm: heal everything and require progress

  #beginCalm(round: number): void {
    this.#chaos = false;
    this.#net.heal();
    this.#diskMsMax.clear();
    this.#spikeRate = 0;
    for (const n of this.#nodes.values()) if (!n.running && !n.destroyed) this.#restart(n);
    this.#calm = { round, since: this.#now, marker: undefined };
    this.#log(`CALM round ${round}: network healed, every node restarted`);
    this.#at(tickMs, { kind: 'calmProbe', round });
  }

  #calmProbe(round: number): void {
    const calm = this.#calm;
    if (calm === undefined || calm.round !== round) return;
    this.#at(tickMs, { kind: 'calmProbe', round });
    const leader = this.#leader();
    if (leader === undefined) return;
    const raw = leader.raw!;
    const st = raw.status();
    const m = calm.marker;
    if (m === undefined || m.leader !== leader.id || raw.termAt(m.index) !== m.term) {
      const res = raw.propose(encodeWrite({ key: 'marker', value: `${round}@${this.#now}` }));
      if (res.ok) {
        calm.marker = { index: res.lastIndex, term: res.term, leader: leader.id };
        this.#log(`CALM marker proposed at n${leader.id} index ${res.lastIndex}`);
        this.#pump(leader);
      }
      return;
    }
    // Done when every running member of the leader's configuration has applied the marker.
    const members = [...st.confState.voters, ...st.confState.learners];
    for (const id of members) {
      const n = this.#nodes.get(id);
      if (n === undefined || n.destroyed) continue;
      if (!n.running || n.kv.applied < m.index) return;
    }
    const took = this.#now - calm.since;
    this.stats.recoveryMsMax = Math.max(this.stats.recoveryMsMax, took);
    this.#log(`CALM round ${round}: marker applied everywhere after ${took} ms`);
    this.#calm = undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Clients: one operation at a time each, against random nodes

  #clientStep(client: number): void {
    const r = this.#rng;
    const running = [...this.#nodes.values()].filter((n) => n.running);
    if (running.length === 0) {
      this.#at(r.between(10, 50), { kind: 'client', client });
      return;
    }
    const leader = this.#leader();
    const node = leader !== undefined && r.chance(0.6) ? leader : r.pick(running);
    const raw = node.raw!;
    const key = r.pick(keys);
    const opSeq = this.#opSeq++;
    if (r.chance(0.5)) {
      const value = `c${client}.${opSeq}`;
      const res = raw.propose(encodeWrite({ key, value }));
      if (!res.ok) {
        // Refused before anything was appended: the write certainly did not happen.
        this.#at(r.between(5, 30), { kind: 'client', client });
        return;
      }
      this.#pending.set(client, {
        opSeq, client, kind: 'write', key, value, invoke: this.#histSeq++, node: node.id, inc: node.incarnation,
        index: res.lastIndex, term: res.term, context: '', readIndex: undefined,
      });
      this.#log(`c${client} write ${key}=${value} via n${node.id} at ${res.lastIndex}@${res.term}`);
    } else {
      const context = `c${client}.${opSeq}`;
      if (this.#opts.staleReads === true) {
        const inv = this.#histSeq++;
        const value = node.kv.data.get(key);
        this.#history.push({ client, kind: 'read', key, value, invoke: inv, complete: this.#histSeq++ });
        this.#at(r.between(1, 30), { kind: 'client', client });
        return;
      }
      if (!raw.readIndex(context)) {
        this.#at(r.between(5, 30), { kind: 'client', client });
        return;
      }
      this.#pending.set(client, {
        opSeq, client, kind: 'read', key, value: undefined, invoke: this.#histSeq++, node: node.id, inc: node.incarnation,
        index: 0, term: 0, context, readIndex: undefined,
      });
      this.#log(`c${client} read ${key} via n${node.id} (${context})`);
    }
    this.#pump(node);
    this.#at(r.between(clientTimeoutMsMin, 3 * clientTimeoutMsMin), { kind: 'clientTimeout', client, opSeq });
  }

  #finishOp(op: PendingOp, outcome: 'ok' | 'unknown' | 'failed', readValue?: string): void {
    this.#pending.delete(op.client);
    if (op.kind === 'write') {
      if (outcome === 'ok') {
        this.stats.writesOk++;
        this.#history.push({ client: op.client, kind: 'write', key: op.key, value: op.value, invoke: op.invoke, complete: this.#histSeq++ });
      } else if (outcome === 'unknown') {
        this.stats.writesUnknown++;
        this.#history.push({ client: op.client, kind: 'write', key: op.key, value: op.value, invoke: op.invoke, complete: Infinity });
      }
    } else if (outcome === 'ok') {
      this.stats.readsOk++;
      this.#history.push({ client: op.client, kind: 'read', key: op.key, value: readValue, invoke: op.invoke, complete: this.#histSeq++ });
    }
    this.#log(`c${op.client} ${op.kind} ${op.key} ${outcome}${op.kind === 'read' && outcome === 'ok' ? ` = ${readValue ?? '∅'}` : ''}`);
    this.#at(this.#rng.between(1, 30), { kind: 'client', client: op.client });
  }

  #onApplied(node: SimNode, index: number, term: number): void {
    for (const op of this.#pending.values()) {
      if (op.kind !== 'write' || op.node !== node.id || op.inc !== node.incarnation || op.index !== index) continue;
      // The entry at our index committed; it is ours if and only if it carries our term.
      this.#finishOp(op, term === op.term ? 'ok' : 'failed');
    }
  }

  #onReadState(node: SimNode, context: string, index: number): void {
    for (const op of this.#pending.values()) {
      if (op.kind === 'read' && op.node === node.id && op.inc === node.incarnation && op.context === context) {
        op.readIndex = index;
      }
    }
  }

  #serveReads(node: SimNode): void {
    for (const op of [...this.#pending.values()]) {
      if (op.kind !== 'read' || op.node !== node.id || op.inc !== node.incarnation) continue;
      if (op.readIndex === undefined || node.kv.applied < op.readIndex) continue;
      this.#finishOp(op, 'ok', node.kv.data.get(op.key));
    }
  }

  #clientTimeout(client: number, opSeq: number): void {
    const op = this.#pending.get(client);
    if (op === undefined || op.opSeq !== opSeq) return;
    this.#finishOp(op, 'unknown');
  }

  #failOpsOn(node: NodeId): void {
    for (const op of [...this.#pending.values()]) if (op.node === node) this.#finishOp(op, 'unknown');
  }

  #finishClients(): void {
    for (const op of [...this.#pending.values()]) {
      this.#pending.delete(op.client);
      if (op.kind === 'write') this.#history.push({ ...op, complete: Infinity });
    }
  }
}

function shuffle<T>(r: Prng, items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export function describeMessage(m: Message): string {
  const parts = [`${m.type} t${m.term}`];
  switch (m.type) {
    case 'app':
      parts.push(`prev ${m.index}@${m.logTerm} ents ${m.entries.length ? `${m.entries[0]!.index}..${m.entries[m.entries.length - 1]!.index}` : '-'} commit ${m.commit}`);
      break;
    case 'appResp':
      parts.push(m.reject ? `REJECT ${m.index} hint ${m.rejectHint}@${m.logTerm}` : `ok ${m.index}${m.context ? ` ctx ${m.context}` : ''}`);
      break;
    case 'vote':
    case 'preVote':
      parts.push(`last ${m.index}@${m.logTerm}${m.context ? ` ${m.context}` : ''}`);
      break;
    case 'voteResp':
    case 'preVoteResp':
      parts.push(m.reject ? 'REJECT' : 'granted');
      break;
    case 'heartbeat':
      parts.push(`commit ${m.commit}${m.context ? ` ctx ${m.context}` : ''}`);
      break;
    case 'heartbeatResp':
    case 'readIndex':
      if (m.context) parts.push(`ctx ${m.context}`);
      break;
    case 'readIndexResp':
      parts.push(`ctx ${m.context} index ${m.index}`);
      break;
    case 'snap':
      parts.push(`snapshot ${m.snapshot?.metadata.index}@${m.snapshot?.metadata.term}`);
      break;
    case 'termProbeResp':
      if (m.reject) parts.push('UNKNOWN');
      break;
    case 'timeoutNow':
    case 'termProbe':
      break;
  }
  return parts.join(' ');
}

function describeReady(rd: Ready): string {
  const parts: string[] = [];
  if (rd.softState) parts.push(`soft ${rd.softState.state}/lead ${rd.softState.lead}`);
  if (rd.hardState) parts.push(`hard t${rd.hardState.term} v${rd.hardState.vote} c${rd.hardState.commit}`);
  if (rd.entries.length) parts.push(`persist ${rd.entries[0]!.index}..${rd.entries[rd.entries.length - 1]!.index}@${rd.entries[rd.entries.length - 1]!.term}`);
  if (rd.snapshot) parts.push(`snapshot ${rd.snapshot.metadata.index}`);
  if (rd.committedEntries.length) parts.push(`apply ${rd.committedEntries[0]!.index}..${rd.committedEntries[rd.committedEntries.length - 1]!.index}`);
  if (rd.readStates.length) parts.push(`reads ${rd.readStates.map((r) => `${r.context}@${r.index}`).join(',')}`);
  if (rd.messages.length) parts.push(`send ${rd.messages.length}`);
  return parts.join(' | ');
}

export function runSimulation(opts: SimOptions): SimResult {
  return new Simulation(opts).run();
}
