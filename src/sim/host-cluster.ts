/**
 * The deterministic simulation of the production Raft host (issue 9): three or five simulated nodes,
 * each a real RaftNodeHost running the metadata group (RaftMetadataGroup, group 0, every node a
 * voter) beside PartitionReplicas over its own simulated disk, joined by an in-memory transport (Raft
 * messages, forwarded appends and forwarded metadata proposals) through a seeded faulty network, on
 * virtual time. Clients publish batches to random nodes and read and write metadata registers
 * (host-metadata.ts); consumers read the partitions through the nodes' read paths (host-consumers.ts);
 * subscription consumers stream and commit through every node's production subscription hub, and
 * cursor tools run on random nodes (host-subscriptions.ts); faults (host-nemesis.ts) come and go; after every event the partition checks
 * (partition-ledger.ts) and the Raft checks of every group (group-watch.ts) run; at the end the
 * metadata history must be linearizable. Each round of chaos ends in calm: faults heal, every node
 * runs, and within a bound every group must elect, take a new batch on every partition (a new write
 * on the metadata group) and converge on every replica.
 *
 * Determinism. The production code is asynchronous, but it reaches time only through the ports the
 * simulator fills (clock, ticks, scheduler, disk, network): none of it runs on a real timer. So the
 * simulator runs one event, then lets every promise that event set off settle (one turn of the
 * event loop, in which only microtasks run), then checks, then takes the next event; microtasks
 * run in a fixed order, and a seed replays exactly.
 */
import { nodeOfMember } from '../core/member-id.js';
import { InvariantError } from '../core/assert.js';
import { OffsetExpiredError } from '../log/index.js';
import { batchEvents, decodeEntryHead } from '../log/partition-entry.js';
import type { AppendAnswer, AppendForwarder, ForwardedAppend } from '../broker/partition-replicas.js';
import { encodeImage } from '../broker/metadata-codec.js';
import { groupStart, raftEnd } from '../broker/raft-keys.js';
import type { MetadataTransport, RaftMetadataGroup } from '../broker/metadata-group.js';
import { decodeImage, historyPendingKey, type PartitionReplica } from '../broker/partition-replica.js';
import type { GroupMessages, GroupTransport } from '../broker/raft-host/node-host.js';
import type { RaftGroup } from '../broker/raft-host/raft-group.js';
import type { Entry, Message, NodeId, Term } from '../raft/index.js';
import { TransportError, type FetchLogRequest, type ForwardAnswer, type ReadChunk, type ReadRequest } from '../transport/index.js';
import { fromWireReadChunk, fromWireReadRequest, toWireReadChunks, toWireReadRequest } from '../transport/forward-codec.js';
import { GroupWatch } from './group-watch.js';
import { MinHeap } from './heap.js';
import { Clients } from './host-clients.js';
import { Consumers } from './host-consumers.js';
import { MetadataClients } from './host-metadata.js';
import { LeaseProbe } from './host-lease-probe.js';
import { SubscriptionSim } from './host-subscriptions.js';
import { emptyStats, type HostSimContext, type HostSimStats, type SimPartition } from './host-context.js';
import { SimHostNode, simAbortReason, type HostNodeEnv, type HostTuning } from './host-node.js';
import { SimPlacements } from './host-moves.js';
import { Nemesis, shuffle } from './host-nemesis.js';
import { InvariantViolation } from './invariants.js';
import { Network } from './network.js';
import { batchOfEvent, PartitionLedger } from './partition-ledger.js';
import { Prng } from './prng.js';
import { SimDisk, type CrashKind } from './sim-disk.js';
import { describeMessage } from './cluster.js';


/** A node's process incarnation as its batches name it (main.ts: a fresh id per process start). */
function incarnationOf(id: NodeId, inc: number): string {
  return `n${id}.${inc}`;
}

export interface HostSimOptions {
  readonly seed: number;
  /** Record a line per event (slower); a failing seed is replayed with tracing on. */
  readonly trace?: boolean;
  readonly rounds?: number;
  /** Virtual milliseconds of chaos per round. */
  readonly chaosMs?: number;
  /**
   * Let disks lose fsynced writes (default true): one member of a group at a time, where its marker
   * file can tell (NodeDisk marks its groups damaged; they neither vote nor lead until repaired).
   */
  readonly lostTail?: boolean;
  /** Check the rules (DurableQuorum, VoteQuorum, CommitOwnTerm, TermFloor, ReadUncommitted, LeaseHolderBehind) as well as their consequences (default). */
  readonly ruleChecks?: boolean;
  /** Metadata reads skip the ReadIndex barrier: a broken rule the linearizability check must catch. */
  readonly staleMetadataReads?: boolean;
  /**
   * The metadata group runs read leases and the metadata clients read as publishing does
   * (publishBarrier); clock skew is then kept within the leases' drift bound. Default: in even seeds
   * (no random draw, so every seed keeps its run otherwise).
   */
  readonly readLeases?: boolean;
  /** Nodes apply retention during chaos (default true here; host.sim.test.ts and the mutant runner turn it off with SIM_RETENTION=0). */
  readonly retention?: boolean;
  /**
   * Consumers follow the partitions through the nodes' read paths, mostly remote (host-consumers.ts;
   * default true). Off, a seed runs as it did before they existed (the found-list seeds replay so).
   */
  readonly consumers?: boolean;
  /**
   * Subscription consumers and cursor tools (host-subscriptions.ts; default false here, while
   * host.sim.test.ts and the mutant runner turn them on unless SIM_SUBSCRIPTIONS=0). Off, a seed runs
   * as it did before they existed.
   */
  readonly subscriptions?: boolean;
}

export interface HostSimResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly trace: readonly string[];
  readonly stats: HostSimStats;
}

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  readonly node: SimHostNode | undefined;
  readonly inc: number;
}

const topic = 7;
/** The metadata group's id (every node is a voter of it). */
const metadataGroup = 0;
/** Probability that a server resets a remote read before serving it, during chaos. */
const readResetRate = 0.1;
/** Liveness bound after faults heal (virtual ms): leaders, a new batch everywhere, converged replicas. */
export const recoveryMsMax = 6000;
/** Then, the bound for every replica move in flight to finish (a new replica catches up, then the steps). */
export const movesMsMax = 8000;
/** The longest the run waits between chaos and calm for a promotion the aimed wipe may follow (#promotionWindow). */
const promotionWindowMsMax = 2000;

/**
 * A replica's stored snapshot: its raft index, and the offset from which its image says the log
 * starts (a replica that installs it without the log before it reads from there; the next offset if
 * it names no start, or none within it).
 */
function storedSnapshot(r: PartitionReplica): { index: number; start: number } | undefined {
  const snap = r.group.store.storage.snapshot();
  if (snap.metadata.index === 0 || snap.data.byteLength === 0) return undefined;
  try {
    const img = decodeImage(snap.data);
    const start = img.start !== undefined && img.start[0] <= snap.metadata.index && img.start[1] < img.next ? img.start[1] : img.next;
    return { index: snap.metadata.index, start };
  } catch {
    return undefined;
  }
}

/** Lets every promise set off by the event just run settle: only microtasks run before this resolves. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class HostSimulation implements HostSimContext {
  readonly seed: number;
  readonly rng: Prng;
  readonly net = new Network();
  readonly stats = emptyStats();
  readonly partitions: SimPartition[] = [];
  readonly ledger: PartitionLedger;
  readonly lostTail: boolean;
  chaos = true;
  promotionWindow = false;
  readonly damaged = new Set<NodeId>();
  readonly #opts: HostSimOptions;
  /** Served calls under way (#linked). */
  readonly #calls = new Set<() => void>();
  readonly #queue = new MinHeap<Scheduled>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  readonly #nodes = new Map<NodeId, SimHostNode>();
  readonly #watch = new Map<number, GroupWatch>();
  /** Per node and partition: the newest offset read and checked from that replica (-1: none). */
  readonly #seen = new Map<string, number>();
  readonly #reading = new Set<string>();
  /**
   * Replicas the checks were told opened (#opened). A replica a retry of its node opened is hooked
   * only at the node's next reopen round (host-node.ts); until then it is not read or checked: what
   * the checks remember of the partition on that node belongs to the replica before it (a move away
   * and back), and would be taken for this one's (seed 891: a new empty learner read against the
   * offsets its dropped predecessor had read).
   */
  readonly #checked = new WeakSet<PartitionReplica>();
  readonly #trace: string[] = [];
  readonly #tracing: boolean;
  readonly #tuning: HostTuning;
  readonly #nemesis: Nemesis;
  readonly #clients: Clients;
  readonly #metadataClients: MetadataClients;
  readonly #leaseProbe: LeaseProbe | undefined;
  readonly #consumers: Consumers;
  readonly #subscriptions: SubscriptionSim;
  readonly #ids: readonly NodeId[];
  readonly moves: SimPlacements;
  #now = 0;
  #seq = 0;
  #markers = 0;
  readonly #probing = new Set<number>();
  /** Probability that a new leader is cut off shortly after its election (during chaos). */
  readonly #flapRate: number;
  /** The event type's retention time (node ms). */
  readonly #retentionMs: number;
  /** Per node and partition: the lowest offset read and checked from that replica since it last jumped ahead. */
  readonly #low = new Map<string, number>();
  /** Per node and partition: the next offset of the snapshot whose log the replica was fetching when last checked. */
  readonly #pendingSeen = new Map<string, number>();
  #failure: unknown;
  /**
   * Draws whether a server resets a remote read before serving it: its own stream (derived from the
   * seed), so the other draws keep their order.
   */
  readonly #readResets: Prng;

  constructor(opts: HostSimOptions) {
    this.seed = opts.seed;
    this.#opts = opts;
    this.#tracing = opts.trace === true;
    this.lostTail = opts.lostTail ?? true;
    const r = (this.rng = new Prng(opts.seed));
    const electionTicks = r.between(8, 15);
    // A small memory tail makes leaders compact often: followers behind it get a snapshot and fetch
    // the entries they lack from the leader's log (log shipping).
    this.#tuning = {
      tickMs: 10,
      electionTicks,
      heartbeatTicks: r.between(1, 3),
      appendTimeoutMs: r.pick([300, 1000]),
      memoryEntries: r.pick([1024, 4, 8, 16]),
      // Drawn from a generator of its own, so that every other draw of a seed stays as it was.
      tailSlabs: new Prng(opts.seed * 31 + 7).pick([undefined, { totalBytes: 2048, slabBytes: 256 }, { totalBytes: 8192, slabBytes: 1024 }]),
      // Often small: the metadata group compacts and lagging members install its snapshots.
      metadataSnapshotEntries: r.pick([8, 32, 1000]),
      metadataTimeoutMs: 1000,
      // Retention as production runs it, on every node (retention.ts), often enough to cut logs that
      // followers are still fetching or catching up on; off in a quarter of the seeds, and in all of
      // them unless asked for (opts.retention; the draw is made either way, so seeds keep their runs).
      retentionEveryMs: ((every) => (opts.retention !== false ? every : undefined))(r.pick([undefined, 150, 400, 1000])),
      // A lease of one election timeout, as main.ts; a drift bound of 5 %, which the skews keep to.
      readLeases: (opts.readLeases ?? opts.seed % 2 === 0) ? { leaseMs: electionTicks * 10, freshMs: electionTicks * 5, drift: 0.05 } : undefined,
    };
    // The event type's retention time (node ms): a cutoff is each node's own wall clock minus it.
    this.#retentionMs = r.pick([300, 800, 2000]);
    this.#flapRate = r.pick([0, 0.2, 0.5]);
    const ids = r.chance(0.4) ? [1, 2, 3] : r.chance(0.5) ? [1, 2, 3, 4] : [1, 2, 3, 4, 5];
    this.#ids = ids;
    this.#watch.set(metadataGroup, new GroupWatch(metadataGroup, ids, opts.ruleChecks ?? true));
    // Three and four nodes: two partitions of three replicas. Five: two of three and one of five
    // replicas. Replica moves need a node outside a group: four and five nodes.
    const layouts = ids.length === 5 ? [3, 3, 5] : [3, 3];
    layouts.forEach((rf, index) => {
      const replicas = shuffle(r, ids).slice(0, rf);
      this.partitions.push({ index, topic, partition: index, group: 100 + index, founders: replicas, replicas });
      this.#watch.set(100 + index, new GroupWatch(100 + index, replicas, opts.ruleChecks ?? true, true));
    });
    // A batch's append time is some node's clock after it was sent: at least the slowest clock then.
    this.ledger = new PartitionLedger(this.partitions.length, () => Math.min(...this.nodes().map((n) => n.clock.nowMs())));
    // Its own stream of choices (derived from the seed, drawing nothing from the main one).
    this.moves = new SimPlacements(this, new Prng(opts.seed * 31 + 7), ids, new Prng(opts.seed * 59 + 17));
    this.moves.metadataLeader = () => this.metadataLeader();
    this.moves.metadataMembers = () => {
      const conf = this.metadataLeader()?.metadata?.raftGroup.conf;
      return conf === undefined ? [] : [...conf.voters, ...conf.learners];
    };
    this.moves.onApplied = (id) => {
      const n = this.node(id);
      if (!n.running) return;
      const inc = n.incarnation;
      n.placementApplied().catch((err: unknown) => {
        if (n.incarnation !== inc) return;
        // The disk refused the new replica's first write (a full disk, a failed fsync, which stops
        // the node by itself): main.ts logs it and goes on, as here.
        if (err instanceof Error && (err.name === 'KvWriteError' || err.name === 'DurabilityLostError')) this.log(`n${id} opening a moved replica failed: ${err.message}`);
        else this.fail(err);
      });
    };
    this.#nemesis = new Nemesis(this);
    this.#clients = new Clients(this, r.between(2, 4));
    this.#metadataClients = new MetadataClients(this, r.between(1, 3), r.between(1, 3), opts.staleMetadataReads === true, this.#tuning.readLeases !== undefined, opts.ruleChecks ?? true);
    // Its own stream of choices, drawing nothing from the main one.
    const leases = this.#tuning.readLeases;
    this.#leaseProbe = leases === undefined ? undefined : new LeaseProbe(this, this.#metadataClients, new Prng(opts.seed * 67 + 23), leases);
    // Their own stream of choices, so that the draws above and the nodes' forks stay as they were.
    const consumerRng = new Prng(opts.seed * 37 + 11);
    this.#readResets = new Prng(opts.seed * 53 + 13);
    this.#consumers = new Consumers(
      this,
      consumerRng,
      {
        voterOn: (node, p) => this.moves.lookup(node)(p.topic, p.partition)?.replicas.includes(this.node(node).member) ?? false,
        retention: this.#tuning.retentionEveryMs !== undefined,
      },
      opts.consumers === false ? 0 : consumerRng.between(2, 4),
    );
    this.#subscriptions = new SubscriptionSim(
      this,
      {
        seed: opts.seed,
        topic,
        retention: this.#tuning.retentionEveryMs !== undefined,
        voterOn: (node, p) => this.moves.lookup(node)(p.topic, p.partition)?.replicas.includes(this.node(node).member) ?? false,
      },
      opts.subscriptions === true ? new Prng(opts.seed * 47 + 5).between(1, 3) : 0,
    );
    const env = this.#env();
    for (const id of ids) {
      const disk = new SimDisk(this.#diskEnv(id));
      this.#nodes.set(id, new SimHostNode(id, env, r.fork(), disk));
    }
    this.log(`seed ${opts.seed}: nodes ${ids.join(',')} tuning ${JSON.stringify(this.#tuning)} partitions ${this.partitions.map((p) => `p${p.index}=g${p.group}[${p.replicas.join(',')}]`).join(' ')}`);
  }

  // -------------------------------------------------------------------------------------------
  // The context the parts share

  nowMs(): number {
    return this.#now;
  }

  at(delayMs: number, fn: () => void, node?: SimHostNode, inc?: number): void {
    this.#queue.push({ at: this.#now + Math.max(0, delayMs), seq: this.#seq++, fn, node, inc: inc ?? node?.incarnation ?? 0 });
  }

  log(line: string): void {
    if (this.#tracing) this.#trace.push(`${this.#now.toFixed(2).padStart(10)} ${line}`);
  }

  node(id: NodeId): SimHostNode {
    const n = this.#nodes.get(id);
    if (n === undefined) throw new Error(`no node ${id}`);
    return n;
  }

  nodes(): readonly SimHostNode[] {
    return [...this.#nodes.values()];
  }

  running(): SimHostNode[] {
    return this.nodes().filter((n) => n.running);
  }

  #group(n: SimHostNode, p: SimPartition): RaftGroup<unknown> | undefined {
    return n.replicas?.replica(p.topic, p.partition)?.group as RaftGroup<unknown> | undefined;
  }

  #groupById(n: SimHostNode, group: number): RaftGroup<unknown> | undefined {
    const p = this.partitions.find((q) => q.group === group);
    return p === undefined ? undefined : this.#group(n, p);
  }

  metadataLeader(): SimHostNode | undefined {
    let best: SimHostNode | undefined;
    let term = -1;
    for (const n of this.running()) {
      const g = n.metadata?.raftGroup;
      if (g === undefined || !g.isLeader() || g.term <= term) continue;
      best = n;
      term = g.term;
    }
    return best;
  }

  leaderOf(p: SimPartition): SimHostNode | undefined {
    let best: SimHostNode | undefined;
    let term = -1;
    // Any node that holds the group (a move adds and removes members).
    for (const n of this.#nodes.values()) {
      const g = n.running ? this.#group(n, p) : undefined;
      if (g === undefined || !g.isLeader()) continue;
      if (g.term > term) {
        best = n;
        term = g.term;
      }
    }
    return best;
  }

  #countHost(node: SimHostNode): void {
    this.stats.quiesced += node.host?.stats.quiesced ?? 0;
    this.stats.woken += node.host?.stats.woken ?? 0;
  }

  fail(err: unknown): void {
    this.#failure ??= err;
  }

  crash(node: SimHostNode, how: CrashKind, restartAfterMs: number | undefined): void {
    if (!node.running) return;
    this.stats.crashes++;
    this.log(`n${node.id} CRASH ${how.kind}${how.kind === 'keepPrefix' ? ` ${how.keep}` : how.kind === 'lostTail' ? ` ${how.syncs} syncs` : ''}${restartAfterMs === undefined ? '' : ` (restart in ${restartAfterMs} ms)`}`);
    this.stats.refusedWrites += node.disk.stats.refused;
    this.#countHost(node);
    // The member the node's metadata group ran as: the one whose data a wipe or a lost tail takes.
    const member = node.metadata?.raftGroup.self ?? node.nodeDisk?.metadataMember ?? node.id;
    if (how.kind === 'wiped') node.wipeDirectory();
    else this.#stopped(node);
    // Only a start after loseMetadata checks the member id it keeps.
    if (how.kind === 'wiped' || how.kind === 'lostTail') this.#keepsMember.delete(node.id);
    node.crash(node.disk.crash(how));
    if (how.kind === 'lostTail' || how.kind === 'wiped') {
      this.damaged.add(node.id);
      // The same member in every group (partition groups run under the directory's member id too).
      for (const w of this.#watch.values()) w.lostData(member);
    }
    if (how.kind === 'lostRange') {
      // The marker file goes with the lost records, so the next start finds raft state lost (a tail
      // lost within the marker's lag would go unnoticed: docs/storage.md), and every group it holds is
      // damaged until its leader repairs it.
      node.loseMarker();
      this.damaged.add(node.id);
      for (const [g, w] of this.#watch) if (how.gte.compare(groupStart(g)) <= 0 && groupStart(g).compare(how.lt) < 0) w.lostData(member);
    }
    this.#clients.nodeCrashed(node);
    this.#metadataClients.nodeCrashed(node);
    for (const p of this.partitions) this.#reading.delete(`${node.id}:${p.index}`);
    // The reads it served fail (their connections reset); the streams it served to consumers end.
    for (const reset of [...(this.#resets.get(node.id) ?? [])]) reset();
    this.#consumers.nodeCrashed(node);
    this.#subscriptions.nodeCrashed(node);
    if (restartAfterMs !== undefined) {
      const inc = node.incarnation;
      this.at(restartAfterMs, () => {
        if (!node.running && node.incarnation === inc) this.#start(node);
      });
    }
  }

  /**
   * Member ids nodes must start their metadata group under: set by loseMetadata when the disk kept
   * partition records, checked (and cleared) when the metadata group opens.
   */
  readonly #keepsMember = new Map<NodeId, number>();

  loseMetadata(node: SimHostNode, restartAfterMs: number): void {
    if (!node.running) return;
    const member = node.metadata?.raftGroup.self ?? node.member;
    this.stats.metadataLosses++;
    this.crash(node, { kind: 'lostRange', gte: groupStart(metadataGroup), lt: groupStart(metadataGroup + 1) }, restartAfterMs);
    // The rule (partition-state-held.ts, docs/metadata-raft.md "Not when the directory holds
    // partition records"): records of its partition groups were written under its member id, which it
    // keeps. A node that holds none (its replicas moved away) makes a new one, as a wiped directory does.
    if (node.disk.holds(groupStart(metadataGroup + 1), raftEnd)) this.#keepsMember.set(node.id, member);
    this.log(`n${node.id} lost its metadata group's records${this.#keepsMember.has(node.id) ? `, kept its partition records: it must start as member ${member}` : ' and holds no partition records'}`);
  }

  #start(node: SimHostNode): void {
    for (const p of this.partitions) this.#forget(`${node.id}:${p.index}`);
    this.log(`n${node.id} START`);
    const inc = node.incarnation + 1;
    node.start().catch((err: unknown) => {
      // A process killed while it started: what it was doing is gone with it (its disk is closed).
      if (node.incarnation !== inc) return;
      if (!(err instanceof Error) || (err.name !== 'KvWriteError' && err.name !== 'DurabilityLostError')) {
        this.fail(err);
        return;
      }
      // The disk refused a write of the start (the identity, a damage mark, a new group; a full disk or
      // a failed fsync): the process exits, and is started again later, as a supervisor would.
      this.log(`n${node.id} START failed: ${err.message}`);
      this.crash(node, { kind: 'unsynced' }, this.rng.between(50, 300));
    });
  }

  // -------------------------------------------------------------------------------------------
  // What the nodes are given

  #diskEnv(id: NodeId) {
    return {
      nowMs: () => this.#now,
      at: (atMs: number, fn: () => void) => this.at(atMs - this.#now, fn),
      syncMs: () => this.#nemesis.syncMs(id),
    };
  }

  #env(): HostNodeEnv {
    return {
      nowMs: () => this.#now,
      at: (delayMs, node, inc, fn) => this.at(delayMs, fn, node, inc),
      syncMs: (id) => this.#nemesis.syncMs(id),
      tuning: this.#tuning,
      founders: this.#ids,
      metadataTransport: (node) => this.#metadataTransport(node),
      metadataOpened: (node, md) => {
        if (this.#tracing) this.log(`n${node.id} opened metadata: applied ${md.raftGroup.applied}, ${JSON.stringify(md.view().metadata)}`);
        // The metadata group's members are member ids (a wiped node's is a new one: core/member-id.ts).
        this.#watch.get(metadataGroup)!.opened(md.raftGroup.self, md.raftGroup);
        const kept = this.#keepsMember.get(node.id);
        if (kept !== undefined) {
          this.#keepsMember.delete(node.id);
          if (md.raftGroup.self !== kept) this.fail(new InvariantViolation('MemberKept', `n${node.id} lost its metadata group's records but kept its partition records, written under member ${kept}: it started the metadata group as member ${md.raftGroup.self}`));
          else this.stats.membersKept++;
        }
      },
      placement: (id) => this.moves.lookup(id),
      proposeMove: (node) => {
        const propose = this.moves.propose(node);
        return (cmd) => {
          this.#promotionRecorded(node, cmd);
          return propose(cmd);
        };
      },
      placements: (id) => this.moves.views(id),
      partitionsOf: (id) => this.moves.placedOn(id),
      transport: (node) => this.#transport(node),
      forwarder: (node) => this.#forwarder(node),
      fatal: (node, inc, err) => this.#fatal(node, inc, err),
      opened: (node, r) => this.#opened(node, r),
      persisted: (node, g, rd) => {
        if (rd.snapshot !== undefined) this.stats.snapshotsStored++;
        if (this.#tracing) {
          const f = rd.entries[0];
          const l = rd.entries[rd.entries.length - 1];
          this.log(`n${node.id} g${g.id} stored${rd.snapshot === undefined ? '' : ` snapshot ${rd.snapshot.metadata.index}@${rd.snapshot.metadata.term}`}${f === undefined ? '' : ` ${f.index}@${f.term}..${l!.index}@${l!.term}`}${rd.hardState === undefined ? '' : ` ${JSON.stringify(rd.hardState)}`}`);
        }
        this.#watch.get(g.id)?.persisted(g.self, g, rd);
      },
      applied: (node, g, e) => {
        if (this.#tracing) this.log(`n${node.id} g${g.id} applied ${e.index}@${e.term}`);
        this.#watch.get(g.id)?.applied(g.self, e);
        this.#stamps(g.id, e);
      },
      // What production's runRetentionOnce would log as 'retention failed' (other than a refused
      // write) is a bug: the run stops on it, naming the seed.
      retention: (node) => this.#retention(node).catch((err: unknown) => this.fail(err instanceof InvariantViolation || err instanceof InvariantError ? err : new InvariantViolation('RetentionFailed', `n${node.id}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`))),
      woke: (node, r) => this.#read(node, r),
      metadataApplied: (_node, md, cmd) => {
        this.#subscriptions.applied(md);
        this.#metadataClients.applied(cmd, md.lastChange);
      },
      hub: (node, inc, md, replicas) => (this.#subscriptions.enabled ? this.#subscriptions.hubFor(node, inc, md, replicas) : undefined),
      reopen: (node) => this.moves.onApplied?.(node.id, -1),
      openRefused: (node, topic, partition, err) => {
        this.stats.opensRefused++;
        this.log(`n${node.id} t${topic}p${partition} open refused: ${err.message}`);
      },
      moved: (node, actions) => {
        for (const a of actions) {
          if (a.kind === 'transfer') this.stats.moveTransfers++;
          if (a.kind === 'confChange') this.stats.moveConfChanges++;
          if (this.#tracing) this.log(`n${node.id} mover: ${JSON.stringify(a)}`);
        }
      },
    };
  }

  #transport(from: SimHostNode): GroupTransport {
    const inc = from.incarnation;
    /** When this node last sent anything to each peer (its own clock). */
    const lastSent = new Map<NodeId, number>();
    return {
      send: (groups: readonly GroupMessages[]) => {
        if (from.incarnation !== inc) return;
        for (const { group, messages } of groups) {
          for (const m of messages) {
            lastSent.set(nodeOfMember(m.to), from.clock.monotonicMs());
            this.#sendRaft(from, group, m);
          }
        }
      },
      // The node-level heartbeat: an empty batch, through the same faulty network.
      ping: (quietMs: number) => {
        if (from.incarnation !== inc) return;
        const now = from.clock.monotonicMs();
        for (const id of this.#nodes.keys()) {
          if (id === from.id || now - (lastSent.get(id) ?? -Infinity) < quietMs) continue;
          lastSent.set(id, now);
          this.stats.pings++;
          for (const d of this.net.delays(this.rng, from.id)) {
            this.at(d, () => {
              const to = this.#nodes.get(id);
              if (to?.running === true && this.net.canDeliver(from.id, id)) to.host?.heard(from.id, incarnationOf(from.id, inc));
            });
          }
        }
      },
    };
  }

  /**
   * PromotedUnrepaired where a move's promotion (or a rejoin) is recorded: the leader decided it from
   * the status it has now (replica-mover.ts records in the round that decided it), so the learner's
   * match must reach its term's first entry here as at the configuration change (group-watch.ts).
   */
  #promotionRecorded(node: SimHostNode, cmd: { readonly group: number; readonly step: string; readonly to: number }): void {
    if (this.#opts.ruleChecks === false || (cmd.step !== 'promote' && cmd.step !== 'rejoin')) return;
    const st = this.#groupById(node, cmd.group)?.raw.status();
    if (st?.progress === undefined) return;
    this.stats.promotionsRecorded++;
    const match = st.progress.get(cmd.to)?.match ?? 0;
    const termStart = st.termStart ?? 0;
    if (match < termStart) {
      this.fail(new InvariantViolation('PromotedUnrepaired', `group ${cmd.group}: leader n${node.id} of term ${st.term} (first entry ${termStart}, commit ${st.commit}) recorded ${cmd.step} of ${cmd.to}, its match ${match} below its term`));
    }
  }

  #sendRaft(from: SimHostNode, group: number, m: Message): void {
    this.stats.messages++;
    if (m.type === 'termProbeResp' && m.index !== 0) {
      // Term probes are the metadata group's (#groupById knows the partition groups only).
      const g = group === metadataGroup ? from.metadata?.raftGroup : this.#groupById(from, group);
      if (g !== undefined) this.#watch.get(group)?.probeAnswered(g, m);
    }
    const inc = from.incarnation;
    // Routed by node, as the gRPC transport does (a member id names its node: core/member-id.ts).
    const toNode = nodeOfMember(m.to);
    const delays = this.net.delays(this.rng, from.id, toNode);
    if (m.type === 'snap') this.stats.snapshots++;
    if (m.type === 'snap' && delays.length === 0) this.at(1, () => from.handlers.get(group)?.snapshotStatus(toNode, false), from);
    for (const d of delays) {
      this.at(d, () => {
        const to = this.#nodes.get(toNode);
        if (to === undefined || !this.net.canDeliver(from.id, toNode)) return;
        const handler = to.handlers.get(group);
        if (!to.running || handler === undefined) {
          // The connection is refused: the sender's transport says so.
          if (this.rng.chance(0.5)) this.at(1, () => from.host?.unreachable(toNode), from);
          return;
        }
        if (this.#tracing) this.log(`n${m.to} <- n${m.from} g${group} ${describeMessage(m)}`);
        if (m.type === 'voteResp' && !m.reject) {
          this.#watch.get(group)?.voteGranted(m.to, m.from, m.term);
          const st = this.#groupById(to, group)?.raw.status();
          if (st !== undefined && st.state === 'candidate' && st.term > m.term) this.stats.staleGrants++;
        }
        // Every batch names its sender's process incarnation (the gRPC transport's MessageBatch).
        to.host?.heard(from.id, incarnationOf(from.id, inc));
        handler.receive(m);
        if (m.type === 'snap') this.at(d, () => from.handlers.get(group)?.snapshotStatus(toNode, true), from);
      });
    }
  }

  /**
   * Forwarded appends travel the same faulty network; a call that gets no answer ends at its deadline.
   * A grouped call (forwardAppendMany) is one message each way: its parts arrive together, each is
   * served on its own, and the answers come back together once all are in (as the gRPC server does).
   */
  #forwarder(from: SimHostNode): AppendForwarder {
    return {
      forwardAppend: (to: NodeId, req: ForwardedAppend) => this.#forwardCall(from, to, [req]).then((a) => a[0]!),
      forwardAppendMany: (to: NodeId, reqs: readonly ForwardedAppend[]) => this.#forwardCall(from, to, reqs),
      fetchLog: (to: NodeId, req: FetchLogRequest, signal?: AbortSignal) => this.#fetchLog(from, from.incarnation, to, req, signal),
      bounds: (to: NodeId, req: { group: number; topic: number; partition: number }) => this.#bounds(from, from.incarnation, to, req),
      read: (to: NodeId, req: ReadRequest, signal?: AbortSignal) => this.#remoteRead(from, from.incarnation, to, req, signal),
    };
  }

  /** Per node: what fails the calls it serves when it crashes (a TCP connection reset). */
  readonly #resets = new Map<NodeId, Set<() => void>>();

  /**
   * A remote read (the transport's Read service, forward.proto) over the simulated network: the
   * request and each chunk take a link delay, both ends go through the wire codec as the gRPC
   * transport does (the server splits a chunk where its offsets or the limits say, the client checks
   * each one against what it read before), and the call fails when the link is cut at a hop, the
   * server crashes while it serves (even while it waits for new events), or the server's read fails
   * (the client sees only a status). Before a chunk leaves, the check that a replica serves only
   * what it applied (ReadUncommitted).
   */
  async *#remoteRead(from: SimHostNode, inc: number, to: NodeId, req: ReadRequest, signal?: AbortSignal): AsyncIterable<ReadChunk> {
    const y = this.node(to);
    const yInc = y.incarnation;
    const lost = () => new TransportError('unavailable', `read from node ${to}: connection lost`);
    const hop = (a: NodeId, b: NodeId): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const f = this.net.faults;
        this.at(this.rng.between(f.delayMsMin, f.delayMsMax), () => {
          if (!this.net.canDeliver(a, b) || !y.running || y.incarnation !== yInc) reject(lost());
          else resolve();
        }, from, inc);
      });
    this.stats.remoteReads++;
    try {
      await hop(from.id, to);
    } catch (err) {
      this.stats.remoteReadsFailed++;
      throw err;
    }
    // During chaos a server now and then resets a read before serving it (a connection reset, a
    // server shedding load): the reader goes on at the next replica from the same cursor. Cuts and
    // crashes alone made that failover rare while events were there to read (a read that resumed one
    // event past its cursor was caught by 16 of 40 seeds; docs/testing.md, "The mutant run").
    if (this.chaos && this.#readResets.chance(readResetRate)) {
      this.stats.remoteReadsFailed++;
      this.stats.remoteReadResets++;
      throw new TransportError('unavailable', `read from node ${to}: connection reset`);
    }
    const handler = y.handlers.get(req.group);
    if (handler?.read === undefined) {
      this.stats.remoteReadsFailed++;
      throw new TransportError('unavailable', `read from node ${to}: group ${req.group} is not hosted there`);
    }
    const served = fromWireReadRequest(toWireReadRequest(req) as Parameters<typeof fromWireReadRequest>[0]);
    const { ac, unlink } = this.#linked(signal);
    let reset!: () => void;
    const crashed = new Promise<never>((_, reject) => (reset = () => reject(lost())));
    crashed.catch(() => undefined);
    const resets = this.#resets.get(to) ?? new Set();
    this.#resets.set(to, resets);
    resets.add(reset);
    const it = handler.read(from.id, served, ac.signal)[Symbol.asyncIterator]();
    let sentAfter = served.afterOffset;
    let after = req.afterOffset;
    try {
      for (;;) {
        let next: IteratorResult<ReadChunk>;
        let wire: ReturnType<typeof toWireReadChunks>;
        try {
          next = await Promise.race([it.next(), crashed]);
          if (next.done === true) return;
          this.#checkServed(y, req, next.value);
          wire = toWireReadChunks(next.value, served, sentAfter);
        } catch (err) {
          // What the server's read threw reaches the client as a status, one hop later.
          this.stats.remoteReadsFailed++;
          await hop(to, from.id);
          throw err instanceof TransportError ? err : new TransportError('unavailable', `node ${to}: ${(err as Error).message}`);
        }
        const last = next.value.events[next.value.events.length - 1];
        if (last !== undefined) sentAfter = last.offset;
        for (const w of wire) {
          await hop(to, from.id).catch((err: unknown) => {
            this.stats.remoteReadsFailed++;
            throw err;
          });
          const chunk = fromWireReadChunk(w as Parameters<typeof fromWireReadChunk>[0], req, after);
          const l = chunk.events[chunk.events.length - 1];
          if (l !== undefined) after = l.offset;
          yield chunk;
        }
      }
    } finally {
      resets.delete(reset);
      unlink();
      void it.return?.()?.catch(() => undefined);
    }
  }

  /**
   * The signal a served call (a remote read, a fetch of the log) runs under: aborted when the caller's
   * `signal` is, or by `unlink` when the call ends, which also takes its listener off the caller's
   * signal. The caller's may be AbortSignal.timeout(120 s) (or one combined by AbortSignal.any): Node
   * keeps such a signal with a listener until it aborts, and the listener reaches the whole
   * simulation, so a listener left on it kept runs that had ended alive for minutes. A call still
   * under way when the run ends is aborted then (#unlinkAll).
   */
  #linked(signal: AbortSignal | undefined): { ac: AbortController; unlink: () => void } {
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(simAbortReason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const unlink = (): void => {
      this.#calls.delete(unlink);
      signal?.removeEventListener('abort', onAbort);
      ac.abort(simAbortReason);
    };
    this.#calls.add(unlink);
    return { ac, unlink };
  }

  /** The run ended: every served call still under way, and every timeout signal given to a node, aborts. */
  #unlinkAll(): void {
    for (const unlink of [...this.#calls]) unlink();
    for (const n of this.#nodes.values()) n.abortTimeouts();
  }

  /** A replica serves only events it applied (committed): none past its newest applied offset. */
  #checkServed(server: SimHostNode, req: ReadRequest, chunk: ReadChunk): void {
    if (this.#opts.ruleChecks === false) return;
    const r = server.replicas?.replica(req.topic, req.partition);
    const last = chunk.events[chunk.events.length - 1];
    if (last === undefined) return;
    const applied = r?.bounds().newest ?? -1;
    if (last.offset > applied) {
      // Failed here, not thrown: the node reading would take a throw for a failed read and try another replica.
      this.fail(new InvariantViolation('ReadUncommitted', `n${server.id} served offset ${last.offset} of partition ${req.partition} to a remote read, beyond ${applied}, the newest offset it applied`));
    }
  }

  /** A replica's bounds over the simulated network (one hop each way; fails when the link or the node is gone). */
  async #bounds(from: SimHostNode, inc: number, to: NodeId, req: { group: number; topic: number; partition: number }): Promise<{ oldest: number; newest: number; epoch: Term; leader: NodeId }> {
    const y = this.node(to);
    const yInc = y.incarnation;
    const hop = (a: NodeId, b: NodeId): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const f = this.net.faults;
        this.at(this.rng.between(f.delayMsMin, f.delayMsMax), () => {
          if (!this.net.canDeliver(a, b) || !y.running || y.incarnation !== yInc) reject(new Error(`bounds from node ${to}: connection lost`));
          else resolve();
        }, from, inc);
      });
    await hop(from.id, to);
    const handler = y.handlers.get(req.group);
    if (handler?.bounds === undefined) throw new Error(`bounds from node ${to}: group ${req.group} is not hosted there`);
    const answer = await handler.bounds(from.id, req);
    await hop(to, from.id);
    return { oldest: answer.oldest, newest: answer.newest, epoch: answer.epoch as Term, leader: answer.leader as NodeId };
  }

  /**
   * A forwarded append arriving at node `y`, as the transport's dispatcher serves it: by the group's
   * handler, which the node registers when it opens the group's replica; a group it does not host
   * (not placed there, or not opened yet: a wiped node's replica opens only once the placement lists
   * its new member, after its metadata group has opened) is answered unavailable. Calling
   * PartitionReplicas.appendForwarded directly opened the replica at once, under the member the
   * directory ran as before its metadata group made the new one (seeds 39 and 43 of 100: a wiped node
   * joined its groups as its former member).
   */
  appendAt(y: SimHostNode, from: NodeId, req: ForwardedAppend): Promise<AppendAnswer> {
    const h = y.handlers.get(req.group);
    if (h?.append === undefined) return Promise.resolve({ status: 'unavailable', detail: `group ${req.group} is not hosted on this node` });
    return h.append(from, req);
  }

  #forwardCall(from: SimHostNode, to: NodeId, reqs: readonly ForwardedAppend[]): Promise<readonly AppendAnswer[]> {
    const inc = from.incarnation;
    let deadlineMs = 0;
    for (const r of reqs) deadlineMs = Math.max(deadlineMs, r.deadlineMs);
    return new Promise<readonly AppendAnswer[]>((resolve, reject) => {
      if (from.incarnation !== inc) return;
      this.stats.forwards++;
      if (reqs.length > 1) this.stats.groupedForwards++;
      let done = false;
      const finish = (f: () => void): void => {
        if (done) return;
        done = true;
        f();
      };
      for (const req of reqs) this.log(`n${from.id} forwards ${req.requestId} g${req.group} to n${to} epoch ${req.epoch}${reqs.length > 1 ? ` (1 of ${reqs.length} in one call)` : ''}`);
      from.after(deadlineMs, () => finish(() => reject(new Error(`forward to node ${to}: deadline exceeded`))));
      for (const d of this.net.delays(this.rng)) {
        this.at(d, () => {
          const y = this.#nodes.get(to);
          if (y === undefined || !this.net.canDeliver(from.id, to)) return;
          if (!y.running || y.replicas === undefined) {
            this.at(1, () => finish(() => reject(new Error(`forward to node ${to}: connection refused`))), from);
            return;
          }
          const yInc = y.incarnation;
          Promise.all(reqs.map((req) => this.appendAt(y, from.id, req)))
            .then((answer) => {
              if (y.incarnation !== yInc) return;
              for (const back of this.net.delays(this.rng)) {
                this.at(back, () => {
                  if (this.net.canDeliver(to, from.id)) finish(() => resolve(answer));
                }, from);
              }
            })
            .catch((err: unknown) => this.fail(err));
        });
      }
    });
  }

  /**
   * A follower's metadata proposal to the leader travels the same faulty network, but is delivered at
   * most once (a gRPC call is not duplicated; unlike a forwarded append, a metadata command carries no
   * request id, and a second copy would be applied again); a call that gets no answer ends at its
   * deadline, as a gRPC call does.
   */
  #metadataTransport(from: SimHostNode): MetadataTransport {
    const inc = from.incarnation;
    return {
      reachable: (id) => this.net.canDeliver(from.id, id) && this.node(id).running,
      forward: (to, req) =>
        new Promise<ForwardAnswer>((resolve) => {
          if (from.incarnation !== inc) return;
          let done = false;
          const finish = (a: ForwardAnswer): void => {
            if (done) return;
            done = true;
            resolve(a);
          };
          this.log(`n${from.id} forwards a metadata proposal (${req.flowId}) to n${to}`);
          from.after(req.deadlineMs, () => finish({ status: 'unavailable', detail: `forward to node ${to}: deadline exceeded` }));
          for (const d of this.net.delays(this.rng).slice(0, 1)) {
            this.at(d, () => {
              const y = this.#nodes.get(to);
              if (y === undefined || !this.net.canDeliver(from.id, to)) return;
              const handler = y.handlers.get(metadataGroup);
              if (!y.running || handler?.propose === undefined) {
                this.at(1, () => finish({ status: 'unavailable', detail: `forward to node ${to}: connection refused` }), from);
                return;
              }
              const yInc = y.incarnation;
              handler
                .propose({ from: from.id, command: req.command, flowId: req.flowId, deadlineMs: req.deadlineMs })
                .then((answer) => {
                  if (y.incarnation !== yInc) return;
                  for (const back of this.net.delays(this.rng).slice(0, 1)) {
                    this.at(back, () => {
                      if (this.net.canDeliver(to, from.id)) finish(answer);
                    }, from);
                  }
                })
                .catch((err: unknown) => this.fail(err));
            });
          }
        }),
    };
  }

  /**
   * Log shipping over the simulated network: a stream (reliable while it lasts, as over TCP) whose
   * chunks each take a link delay; it breaks when the link is cut or either end crashes.
   */
  async *#fetchLog(from: SimHostNode, inc: number, to: NodeId, req: FetchLogRequest, signal?: AbortSignal): AsyncIterable<{ entries: readonly Entry[] }> {
    const y = this.node(to);
    const yInc = y.incarnation;
    const hop = (a: NodeId, b: NodeId): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const f = this.net.faults;
        this.at(this.rng.between(f.delayMsMin, f.delayMsMax), () => {
          if (!this.net.canDeliver(a, b) || !y.running || y.incarnation !== yInc) reject(new Error(`fetch from node ${to}: connection lost`));
          else resolve();
        }, from, inc);
      });
    this.stats.logFetches++;
    await hop(from.id, to);
    const handler = y.handlers.get(req.group);
    if (handler?.fetchLog === undefined) throw new Error(`fetch from node ${to}: group ${req.group} is not hosted there`);
    const { ac, unlink } = this.#linked(signal);
    try {
      for await (const chunk of handler.fetchLog(from.id, req, ac.signal)) {
        await hop(to, from.id);
        yield chunk;
      }
      this.stats.logFetchesDone++;
    } finally {
      unlink();
    }
  }

  #fatal(node: SimHostNode, inc: number, err: unknown): void {
    if (node.incarnation !== inc || !node.running) return;
    if (err instanceof Error && err.name === 'DurabilityLostError') {
      // A failed fsync stops the node, as it must; an operator restarts it later.
      this.stats.failedSyncs++;
      this.log(`n${node.id} STOPPED: ${err.message}`);
      this.crash(node, { kind: 'unsynced' }, this.rng.between(50, 500));
      return;
    }
    this.fail(new InvariantViolation('HostFatal', `node ${node.id} stopped: ${err instanceof Error ? err.stack ?? err.message : String(err)}`));
  }

  /**
   * Where each replica of a node that stops reads from, and the latest snapshot it holds (at its next
   * start: RetainedForgotten). A replica fetching the log before a snapshot it installed counts that
   * log (it fetches it again after the restart).
   */
  #stopped(node: SimHostNode): void {
    for (const p of this.partitions) {
      const r = node.replicas?.replica(p.topic, p.partition);
      if (r === undefined) continue;
      const pending = r.pendingHistory;
      if (pending !== undefined) this.stats.historyFetchStops++;
      const snapshot = Math.max(r.group.store.storage.snapshot().metadata.index, pending?.index ?? 0);
      if (this.#tracing) this.log(`n${node.id} stops p${p.index}: applied ${r.applied}, snapshot ${r.group.store.storage.snapshot().metadata.index}, oldest ${r.localOldest}${pending === undefined ? '' : `, fetching the log before snapshot ${pending.index} from offset ${pending.fromOffset}`}`);
      this.ledger.stopped(`n${node.id}`, p.index, r.groupId, snapshot, this.#readsFrom(r));
    }
  }

  /** Where a replica reads from: its oldest offset, or where the log before its snapshot it is fetching starts. */
  #readsFrom(r: PartitionReplica): number {
    const pending = r.pendingHistory;
    return pending === undefined ? r.localOldest : Math.min(r.localOldest, pending.fromOffset);
  }

  #opened(node: SimHostNode, r: PartitionReplica): void {
    // Started again with the snapshot it held: it reads from no later than before (RetainedForgotten;
    // a fetch of the log before that snapshot under way goes on).
    if (r.pendingHistory !== undefined) this.stats.historyFetchResumed++;
    try {
      this.ledger.reopened(`n${node.id}`, this.partitions[r.partition]!.index, r.groupId, r.applied, this.#readsFrom(r), storedSnapshot(r));
    } catch (err) {
      this.fail(err);
    }
    if (this.#tracing) {
      const st = r.group.store.storage;
      const rs = r.group.raw.status();
      this.log(`n${node.id} opened g${r.groupId}: applied ${r.applied}, offsets ${JSON.stringify(r.bounds())}, log ${st.firstIndex()}..${st.lastIndex()} snapshot ${st.snapshot().metadata.index}, ${JSON.stringify(st.hardState())}${rs.damaged === null ? '' : ` DAMAGED ${JSON.stringify(rs.damaged)}`}; disk ${node.nodeDisk?.opening}${node.nodeDisk?.lostTail === undefined ? '' : ` LOST TAIL: ${node.nodeDisk.lostTail}`}`);
    }
    // Partition groups, like the metadata group, are watched by member id (a wiped node's is a new one).
    this.#watch.get(r.groupId)?.opened(r.group.self, r.group as RaftGroup<unknown>);
    this.#checked.add(r);
    // A replica opened again after it was dropped (moved away, then back) starts empty.
    this.#forget(`${node.id}:${this.partitions[r.partition]!.index}`);
    this.#reading.delete(`${node.id}:${this.partitions[r.partition]!.index}`);
    this.#read(node, r);
  }

  /** A replica opens: it is read again from its oldest offset. */
  #forget(key: string): void {
    this.#seen.set(key, -1);
    this.#low.delete(key);
    this.#pendingSeen.delete(key);
  }

  /**
   * A crash aimed at a fetch of the retained log before a snapshot: the fetch must go on after the
   * restart (its mark on disk, history-mark-ignored; RetainedForgotten), and the nemesis's own
   * crashes, every 50-400 ms, rarely land in a window this short. It waits until the write that
   * installed the snapshot and recorded the fetch is durable (a crash before it only undoes the
   * install: the restarted replica is sent the snapshot again), looking every 1 to 4 ms, then
   * strikes 0 to 8 ms later, while the fetch (its first chunks go over the network) is most likely
   * still under way (or its end is not durable yet). A fetch that ended before still gets its crash.
   * Every fetch that begins during chaos gets one (half of them did, before RetainedForgotten; the
   * mutant was then caught by 4 of 40 seeds). Runs without such a fetch are as they were.
   */
  #crashWhileFetching(n: SimHostNode, p: SimPartition): void {
    const inc = n.incarnation;
    let looks = 0;
    const strike = (): void => {
      if (!this.chaos || !n.running || n.incarnation !== inc) return;
      this.stats.historyFetchCrashes++;
      this.log(`NEMESIS crash while fetching the retained log: n${n.id} p${p.index}`);
      this.crash(n, { kind: 'unsynced' }, this.rng.between(10, 600));
    };
    const look = (): void => {
      if (!this.chaos || !n.running || n.incarnation !== inc) return;
      const r = n.replicas?.replica(p.topic, p.partition);
      const fetching = r?.pendingHistory !== undefined;
      if (r !== undefined && fetching && n.disk.durableAfterLosing(historyPendingKey(r.groupId), 0) === undefined && ++looks < 40) {
        this.at(this.rng.between(1, 4), look, n);
        return;
      }
      this.at(fetching ? this.rng.between(0, 8) : 0, strike, n);
    };
    this.at(this.rng.between(1, 4), look, n);
  }

  /**
   * After every event, every running replica: nothing retention must keep lies before its readable
   * start (RetainedLost; while it fetches the log before its snapshot, from where that log starts);
   * the reader starts again when the readable start moved past it or back before what it read.
   */

  #checkRetained(): void {
    for (const n of this.#nodes.values()) {
      const replicas = n.running ? n.replicas : undefined;
      if (replicas === undefined) continue;
      for (const p of this.partitions) {
        const r = replicas.replica(p.topic, p.partition);
        if (r === undefined || !this.#checked.has(r)) continue;
        const key = `${n.id}:${p.index}`;
        const oldest = r.localOldest;
        const pending = r.pendingHistory;
        const was = this.#pendingSeen.get(key);
        // Fetched: the replica reads events before its snapshot's next offset (from the retained start
        // or, when the others' retention moved it meanwhile, from where they hold the log).
        if (pending !== undefined) {
          if (was === undefined && this.chaos) this.#crashWhileFetching(n, p);
          this.#pendingSeen.set(key, pending.next);
        } else if (was !== undefined) {
          this.#pendingSeen.delete(key);
          if (oldest < was) this.stats.historyFetched++;
          else this.stats.historyAbandoned++;
          this.log(`n${n.id} p${p.index} log before the snapshot ${oldest < was ? 'fetched' : 'given up'}: oldest ${oldest}`);
        }
        this.ledger.retained(`n${n.id}`, p.index, pending === undefined ? oldest : Math.min(oldest, pending.fromOffset), r.bounds().newest);
        const low = this.#low.get(key);
        if ((this.#seen.get(key) ?? -1) + 1 < oldest || (low !== undefined && oldest < low)) this.#read(n, r);
      }
    }
  }

  /**
   * Reads what a replica applied since the last read through its read path, and checks it. A replica's
   * readable log may start after the next offset to read (retention removed it, or a snapshot was
   * installed without the log before it): the reader starts again at the replica's oldest offset, and
   * the ledger checks that nothing retention must keep lay in between. When the replica's oldest
   * offset moves back before the lowest one read (the log before a snapshot fetched back), that part
   * is read and checked too, and must join what was read before.
   */
  #read(node: SimHostNode, r: PartitionReplica): void {
    const p = this.partitions[r.partition]!;
    const key = `${node.id}:${p.index}`;
    if (this.#reading.has(key) || !this.#checked.has(r)) return;
    const inc = node.incarnation;
    const replicas = node.replicas;
    if (replicas === undefined) return;
    this.#reading.add(key);
    const who = `n${node.id}`;
    // This replica, read directly (a learner's node would read a voter's through PartitionReplicas).
    const current = () => node.incarnation === inc && replicas.replica(p.topic, p.partition) === r;
    /** Reads oldest..low-1 (all before the lowest offset read so far), which must end right before low. */
    const readBack = async (oldest: number, low: number): Promise<boolean> => {
      let prev = oldest - 1;
      while (prev < low - 1) {
        const events = await r.read(prev as never, 64, 1 << 20);
        if (!current()) return false;
        if (events.length === 0) throw new InvariantViolation('Dense', `${who} p${p.index}: read after ${prev} returned nothing below ${low} (its oldest is ${oldest})`);
        for (const e of events) {
          if (e.offset >= low) break;
          this.ledger.stored(who, p.index, prev, e.offset, e.bytes.toString());
          prev = e.offset;
        }
        if (events[events.length - 1]!.offset >= low && prev !== low - 1) {
          throw new InvariantViolation('Dense', `${who} p${p.index}: the log read back from ${oldest} ends at ${prev}, the log read before starts at ${low}`);
        }
      }
      return true;
    };
    const loop = async (): Promise<void> => {
      for (;;) {
        if (!current()) return;
        const seen = this.#seen.get(key) ?? -1;
        const low = this.#low.get(key);
        const oldest = r.localOldest;
        const newest = r.bounds().newest;
        if (low !== undefined && oldest < low && oldest <= seen) {
          if (!(await readBack(oldest, low))) return;
          this.#low.set(key, oldest);
          continue;
        }
        if (seen + 1 < oldest) {
          // Retention removed the next offset to read (or the replica never held it): start again
          // at its oldest. While it fetches the log before its snapshot, those events still count.
          const pending = r.pendingHistory;
          this.ledger.skipped(who, p.index, seen, oldest, newest, pending === undefined ? oldest : Math.min(oldest, pending.fromOffset));
          this.#seen.set(key, oldest - 1);
          this.#low.set(key, oldest);
          continue;
        }
        if (newest <= seen) break;
        let events;
        try {
          events = await r.read(seen as never, 64, 1 << 20);
        } catch (err) {
          // Retention moved the oldest offset past it while the read ran: the next turn starts there.
          if (err instanceof OffsetExpiredError && current() && r.localOldest > seen + 1) continue;
          throw err;
        }
        if (!current()) return;
        if (events.length === 0) throw new InvariantViolation('Dense', `${who} p${p.index}: read after ${seen} returned nothing below newest ${newest}`);
        let prev = seen;
        for (const e of events) {
          this.ledger.stored(who, p.index, prev, e.offset, e.bytes.toString());
          prev = e.offset;
        }
        this.#seen.set(key, prev);
        if (low === undefined) this.#low.set(key, seen + 1);
      }
      this.#reading.delete(key);
    };
    loop().catch((err: unknown) => {
      if (!current()) return;
      // A replica that refuses to read what its bounds say it holds (a corrupt-batch error, a gap) is a bug.
      this.fail(err instanceof InvariantViolation || err instanceof InvariantError ? err : new InvariantViolation('ReadFailed', `${who} p${p.index}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`));
    });
  }

  /** The append time of each batch a partition group applied (the leader's clock when it proposed it). */
  #stamps(group: number, e: Entry): void {
    if (e.type !== 'normal' || e.data.byteLength === 0) return;
    const p = this.partitions.find((q) => q.group === group);
    if (p === undefined) return;
    const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
    let head;
    let events: Buffer[];
    try {
      head = decodeEntryHead(data, true);
      if (head.kind !== 'batches') return;
      events = batchEvents(data);
    } catch {
      return; // a malformed entry takes no offsets (the replica drops it)
    }
    let at = 0;
    for (const b of head.batches) {
      const first = events[at];
      at += b.count;
      if (first !== undefined) this.ledger.stamped(p.index, batchOfEvent(first.toString()), head.appendTimeMs);
    }
  }

  /**
   * A retention pass on a node, as runRetentionOnce runs it (src/broker/retention.ts): during chaos,
   * every partition it holds, with the cutoff its own wall clock gives (now minus the retention time),
   * one partition after the other. A refused write fails that partition's pass (production logs it).
   */
  async #retention(node: SimHostNode): Promise<void> {
    const replicas = node.replicas;
    if (!this.chaos || !node.running || replicas === undefined) return;
    const inc = node.incarnation;
    const cutoff = node.clock.nowMs() - this.#retentionMs;
    this.stats.retentionPasses++;
    for (const p of this.partitions) {
      const r = replicas.replica(p.topic, p.partition);
      if (r === undefined) continue;
      this.ledger.retention(p.index, cutoff);
      let removed: number;
      try {
        removed = await replicas.applyRetention(p.topic, p.partition, cutoff);
      } catch (err) {
        if (node.incarnation !== inc) return;
        if (err instanceof Error && (err.name === 'KvWriteError' || err.name === 'DurabilityLostError')) {
          this.log(`n${node.id} p${p.index} retention failed: ${err.message}`);
          continue;
        }
        throw err;
      }
      if (node.incarnation !== inc) return;
      this.stats.retentionRemoved += removed;
      if (removed > 0) {
        this.log(`n${node.id} p${p.index} retention before ${cutoff}: removed ${removed}, oldest ${r.localOldest}`);
        this.#read(node, r);
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // The run

  async run(): Promise<HostSimResult> {
    const rounds = this.#opts.rounds ?? 2;
    const chaosMs = this.#opts.chaosMs ?? 3000;
    try {
      for (const n of this.#nodes.values()) this.#start(n);
      // The starts read their disks at time 0, before the first event (which may crash a node).
      await settle();
      this.#clients.start();
      this.#metadataClients.start();
      this.#leaseProbe?.start();
      this.#consumers.start();
      this.#subscriptions.start();
      for (let round = 0; round < rounds; round++) {
        this.chaos = true;
        this.#nemesis.chaosBegins();
        const nemesis = (): void => {
          if (!this.chaos) return;
          this.#nemesis.act();
          this.at(this.rng.between(50, 400), nemesis);
        };
        this.at(this.rng.between(100, 300), nemesis);
        await this.#runUntil(this.#now + chaosMs);
        await this.#promotionWindow();
        await this.#calm(round);
      }
      this.stats.virtualMs = this.#now;
      for (const n of this.#nodes.values()) this.stats.refusedWrites += n.disk.stats.refused;
      for (const n of this.running()) this.#countHost(n);
      this.#metadataClients.check();
      // Copies: what the nodes still do after the run (the consumers' streams closed below, a proposal
      // they forward) must not reach the result (seed 17 of the replay test logged one more line
      // while the next run of the same seed went on).
      return { seed: this.seed, ok: true, trace: [...this.#trace], stats: { ...this.stats } };
    } catch (e) {
      // Anything else thrown out of a node (an error production code would have logged, a bug of the
      // harness) fails this seed too: the test names the seed and writes its trace, and goes on
      // with the other seeds, instead of ending the whole run on an error that names none.
      const err = e instanceof InvariantViolation || e instanceof InvariantError ? e : new InvariantViolation('Unexpected', e instanceof Error ? e.stack ?? e.message : String(e));
      this.stats.virtualMs = this.#now;
      this.log(`FAILED ${err.message}`);
      return { seed: this.seed, ok: false, error: `${err.name}: ${err.message}`, trace: [...this.#trace], stats: { ...this.stats } };
    } finally {
      this.#consumers.stop();
      this.#subscriptions.stop();
      this.#unlinkAll();
    }
  }

  async #runUntil(end: number, done?: () => boolean): Promise<void> {
    for (;;) {
      if (done !== undefined && done()) return;
      const next = this.#queue.peek();
      if (next === undefined || next.at > end) {
        this.#now = end;
        return;
      }
      this.#queue.pop();
      this.#now = next.at;
      if (next.node !== undefined && (!next.node.running || next.node.incarnation !== next.inc)) continue;
      this.stats.events++;
      next.fn();
      await settle();
      if (this.#failure !== undefined) throw this.#failure;
      this.#check();
    }
  }

  /** The Raft checks of every running member of every group, and what retention may remove. */
  #check(): void {
    this.#checkRetained();
    this.#subscriptions.observe();
    for (const id of this.damaged) {
      const n = this.node(id);
      if (!n.running || n.replicas === undefined) continue;
      const groups = [n.metadata?.raftGroup, ...this.partitions.filter((p) => this.moves.placed(p).includes(id)).map((p) => this.#group(n, p))];
      // Repaired for good once the mark is gone from the disk too (the Ready that repairs is written
      // durably; a crash before that keeps the member damaged). A wiped node's members are new, never
      // damaged: it counts as repaired once its metadata member votes (the leader replaced the former
      // member by it) and no stored placement lists its former member any more (the replacement
      // recorded its removal: until then the group counts a voter that lost everything, and a second
      // loss in it could leave no majority).
      const md = n.metadata?.raftGroup;
      const votes = md !== undefined && md.conf.voters.includes(md.self);
      const replaced = this.partitions.every((p) => this.#formerMembers(p, n).length === 0);
      if (votes && replaced && groups.every((g) => g !== undefined && g.self === n.member && g.raw.status().damaged === null && g.store.damage === undefined)) {
        this.damaged.delete(id);
        this.log(`n${id} repaired`);
      }
    }
    const mw = this.#watch.get(metadataGroup)!;
    for (const n of this.#nodes.values()) {
      const g = n.running ? n.metadata?.raftGroup : undefined;
      if (g !== undefined && mw.observe(g.self, g) && this.chaos && this.rng.chance(this.#flapRate)) this.#flap(n);
    }
    for (const p of this.partitions) {
      const w = this.#watch.get(p.group)!;
      for (const n of this.#nodes.values()) {
        if (!n.running) continue;
        const g = this.#group(n, p);
        if (g !== undefined && w.observe(g.self, g) && this.chaos && this.rng.chance(this.#flapRate)) this.#flap(n);
      }
    }
  }

  /**
   * Short-lived leaders: a node just elected is cut off soon after (before its first appends have
   * reached everyone) and rejoins later, leaving entries of its term on some members only.
   */
  #flap(n: SimHostNode): void {
    this.at(this.rng.between(1, 30), () => {
      if (!this.chaos) return;
      this.net.isolate(n.id, [...this.#nodes.keys()]);
      this.log(`NEMESIS flap: n${n.id} cut off`);
      this.at(this.rng.between(50, 400), () => {
        if (this.chaos) this.net.rejoin(n.id);
      });
    });
  }

  /**
   * The stuck-move case (a move's new member wiped after the metadata recorded its promotion:
   * host-moves.ts, #wipePromoted) needs a promotion while faults may still strike, and a move's new
   * member seldom catches up during chaos (6 of 49 promotions in host seeds 1 to 20; the rest came in
   * calm): when chaos ends with a move in flight not promoted yet, or a wiped node whose replacement
   * has not run, faults stop and heal first (as calm does) and the run waits, up to
   * promotionWindowMsMax, for a promotion, which the aimed wipe may follow. Calm then begins as
   * usual, its recovery timed from its start.
   */
  async #promotionWindow(): Promise<void> {
    const waiting = () => this.moves.aiming > 0 || this.moves.inFlight().some((p) => !this.moves.stored(p).replicas.includes(this.moves.stored(p).moving!.to)) || [...this.damaged].some((id) => this.node(id).wiped && this.partitions.some((p) => this.#formerMembers(p, this.node(id)).length > 0));
    if (!waiting()) return;
    this.chaos = false;
    this.net.heal();
    this.#nemesis.calm();
    for (const n of this.#nodes.values()) if (!n.running) this.#start(n);
    const wiped = this.stats.wipesOfPromoted;
    this.promotionWindow = true;
    this.log('PROMOTION WINDOW');
    try {
      await this.#runUntil(this.#now + promotionWindowMsMax, () => this.stats.wipesOfPromoted > wiped || !waiting());
    } finally {
      this.promotionWindow = false;
    }
  }

  /**
   * Heals every fault, restarts every node, and requires, within recoveryMsMax: a leader in every
   * group, a new batch acknowledged on every partition, and every replica holding the same log.
   */
  async #calm(round: number): Promise<void> {
    this.chaos = false;
    this.net.heal();
    this.#nemesis.calm();
    for (const n of this.#nodes.values()) if (!n.running) this.#start(n);
    const since = this.#now;
    this.log(`CALM round ${round}`);
    const markers = this.partitions.map(() => false);
    const metadataMarker = { acked: false, probing: false };
    const probe = (): void => {
      if (this.chaos) return;
      this.#probe(markers);
      this.#probeMetadata(round, metadataMarker);
      this.at(20, probe);
    };
    this.at(20, probe);
    const newest = (p: SimPartition): number => this.ledger.appliedMax(p.index);
    const recovered = () => this.#converged(markers) && metadataMarker.acked && this.#metadataConverged() && this.#consumers.caughtUp(newest) && this.#subscriptions.caughtUp(newest);
    await this.#runUntil(since + recoveryMsMax, recovered);
    if (!recovered()) {
      const phantoms = this.#converged(markers) ? this.partitions.flatMap((p) => this.ledger.claimsBeyond(p.index).map((c) => `p${p.index}: ${c}`)) : [];
      if (phantoms.length > 0) throw new InvariantViolation('ConsumerPhantom', `round ${round}: consumers read beyond the log every replica converged on: ${phantoms.join('; ')}`);
      throw new InvariantViolation('Liveness', `round ${round}: not recovered ${recoveryMsMax} ms after healing: ${this.#describeState(markers)}; metadata marker ${metadataMarker.acked ? 'acked' : 'pending'}: ${this.#describeMetadata()}; consumers: ${this.#consumers.describe()}; ${this.#subscriptions.describe()}`);
    }
    const took = this.#now - since;
    this.stats.recoveryMsMax = Math.max(this.stats.recoveryMsMax, took);
    // Every move in flight finishes: its steps go on without faults (new replicas catch up, are
    // promoted, leaders leave, old replicas are removed and dropped), and the new replicas converge.
    // So does every fetch of the log before a snapshot installed without it (its tries back off).
    const movesSince = this.#now;
    const settled = () => this.#movesSettled() && this.#converged(markers) && this.#fetching().length === 0;
    await this.#runUntil(movesSince + movesMsMax, settled);
    if (!settled()) {
      const fetching = this.#fetching();
      throw new InvariantViolation(fetching.length > 0 && this.#movesSettled() ? 'Liveness' : 'MoveLiveness', `round ${round}: moves or fetches not finished ${movesMsMax} ms after recovery: ${this.#describeMoves()}; still fetching the log before a snapshot: [${fetching.join(' ')}]; ${this.#describeState(markers)}`);
    }
    this.stats.elections = [...this.#watch.values()].reduce((s, w) => s + w.elections, 0);
    this.stats.oldTermQuorums = [...this.#watch.values()].reduce((s, w) => s + w.oldTermQuorums, 0);
    this.stats.promotions = [...this.#watch.values()].reduce((s, w) => s + w.promotions, 0);
    this.stats.probeAnswersForFormer = [...this.#watch.values()].reduce((s, w) => s + w.probeAnswersForFormer, 0);
    this.stats.probesBeforeAdded = [...this.#watch.values()].reduce((s, w) => s + w.probesBeforeAdded, 0);
    this.log(`CALM round ${round}: recovered after ${took} ms`);
    this.chaos = true;
  }

  /**
   * No move in flight, every node applied the stored placements, every group's configuration (as its
   * leader has it) is its placement, no placement lists a former member of a node (one whose data
   * directory was wiped since: the replacement must have run), and no running node holds a replica it
   * is not placed on.
   */
  #movesSettled(): boolean {
    if (this.moves.inFlight().length > 0 || !this.moves.applied()) return false;
    for (const p of this.partitions) {
      const s = this.moves.stored(p);
      const l = this.leaderOf(p);
      const conf = l === undefined ? undefined : this.#group(l, p)?.raw.status().confState;
      if (conf === undefined || conf.learners.length > 0 || (s.learners?.length ?? 0) > 0) return false;
      if ([...conf.voters].sort().join(',') !== [...s.replicas].sort().join(',')) return false;
      for (const n of this.running()) {
        const g = this.#group(n, p);
        if (this.#formerMembers(p, n).length > 0 || (g !== undefined && !s.replicas.includes(g.self))) return false;
      }
    }
    return true;
  }

  /** Members of node `n` the stored placement of `p` lists other than the one its directory runs as. */
  #formerMembers(p: SimPartition, n: SimHostNode): number[] {
    const s = this.moves.stored(p);
    return [...s.replicas, ...(s.learners ?? [])].filter((m) => nodeOfMember(m) === n.id && m !== n.member);
  }

  /** Replicas still fetching the log before a snapshot they installed without it. */
  #fetching(): string[] {
    const out: string[] = [];
    for (const n of this.running()) {
      for (const p of this.partitions) {
        const h = n.replicas?.replica(p.topic, p.partition)?.pendingHistory;
        if (h !== undefined) out.push(`n${n.id}:p${p.index}@${h.fromOffset}..${h.next - 1}`);
      }
    }
    return out;
  }

  #describeMoves(): string {
    return this.partitions
      .map((p) => {
        const s = this.moves.stored(p);
        const l = this.leaderOf(p);
        const conf = l === undefined ? undefined : this.#group(l, p)?.raw.status().confState;
        const holders = this.running().filter((n) => this.#group(n, p) !== undefined).map((n) => n.id);
        return `p${p.index} stored [${s.replicas.join(',')}] learners [${(s.learners ?? []).join(',')}]${s.moving === undefined ? '' : ` moving ${s.moving.from}->${s.moving.to}`} conf ${conf === undefined ? '-' : `[${conf.voters.join(',')}]/[${conf.learners.join(',')}]`} held on [${holders.join(',')}]`;
      })
      .join('; ');
  }

  moveReplica(): string {
    return this.moves.operate();
  }

  promotedOn(node: NodeId): boolean {
    return this.moves.promotedOn(node);
  }

  /** In calm, publishes one marker batch per partition through its leader until acknowledged. */
  #probe(markers: boolean[]): void {
    for (const p of this.partitions) {
      if (markers[p.index]) continue;
      const l = this.leaderOf(p);
      if (l === undefined || l.replicas === undefined) continue;
      if (this.#probing.has(p.index)) continue;
      this.#probing.add(p.index);
      const b = this.ledger.newBatch(`m${this.#markers++}`, p.index, 1);
      const inc = l.incarnation;
      this.log(`CALM marker ${b.id} p${p.index} via n${l.id}`);
      l.replicas
        .append([{ topic: p.topic, partition: p.partition, events: [Buffer.from(b.payloads[0]!)] }])
        .then(([res]) => {
          this.#probing.delete(p.index);
          if (l.incarnation !== inc || res === undefined) return;
          this.log(`CALM marker ${b.id} ${res.ok ? `acked ${res.first}` : `failed: ${res.error.message}`}`);
          if (res.ok) {
            this.ledger.acked(b, res.first, res.last);
            markers[p.index] = true;
          } else this.ledger.unknown(b);
        })
        .catch((err: unknown) => this.fail(err));
    }
  }

  /** In calm, writes one metadata marker through the metadata leader until acknowledged. */
  #probeMetadata(round: number, marker: { acked: boolean; probing: boolean }): void {
    if (marker.acked || marker.probing) return;
    const l = this.metadataLeader();
    const md = l?.metadata;
    if (l === undefined || md === undefined) return;
    marker.probing = true;
    const inc = l.incarnation;
    this.log(`CALM metadata marker via n${l.id}`);
    md.propose({ op: 'feature.set', feature: `calm-${round}`, enabled: true }).then(
      (r) => {
        marker.probing = false;
        if (l.incarnation === inc && r.ok) marker.acked = true;
      },
      () => (marker.probing = false),
    );
  }

  /** Every node runs the metadata group, has applied what its leader committed, and holds the same state. */
  #metadataConverged(): boolean {
    if (this.#metadataClients.busy) return false;
    const l = this.metadataLeader();
    const commit = l?.metadata?.raftGroup.raw.status().commit;
    if (commit === undefined) return false;
    const group: RaftMetadataGroup[] = [];
    const ids: NodeId[] = [];
    for (const n of this.#nodes.values()) {
      const md = n.running ? n.metadata : undefined;
      if (md === undefined || md.raftGroup.applied !== commit) return false;
      group.push(md);
      ids.push(n.id);
    }
    // Compared once per set of states: a state changes only by applying (or a new process), and this
    // is asked after every event until the run has recovered (encoding every state each time was a
    // few per cent of a seed's CPU).
    if (group.length === this.#metadataSame.length && group.every((md, i) => this.#metadataSame[i] === md) && this.#metadataSameAt === commit) return true;
    let image: string | undefined;
    for (const [i, md] of group.entries()) {
      const mine = Buffer.from(encodeImage(md.state)).toString('base64');
      if (image !== undefined && mine !== image) throw new InvariantViolation('MetadataConverged', `node ${ids[i]} applied ${commit} like the leader but holds another metadata state`);
      image = mine;
    }
    this.#metadataSame = group;
    this.#metadataSameAt = commit;
    return true;
  }

  /** The metadata groups last found to hold the same state, all applied to #metadataSameAt. */
  #metadataSame: readonly RaftMetadataGroup[] = [];
  #metadataSameAt = -1;

  #describeMetadata(): string {
    return [...this.#nodes.values()]
      .map((n) => {
        const st = n.metadata?.raftGroup.raw.status();
        return `n${n.id}${n.running ? '' : '(down)'}:${st === undefined ? '-' : `${st.state[0]}${st.term}/c${st.commit}/a${n.metadata!.raftGroup.applied}${st.damaged === null ? '' : '/damaged'}`}`;
      })
      .join(' ');
  }

  #converged(markers: readonly boolean[]): boolean {
    if (markers.some((m) => !m) || this.#clients.busy) return false;
    for (const p of this.partitions) {
      const want = this.ledger.appliedMax(p.index);
      if (want < this.ledger.ackedMax(p.index)) return false;
      for (const id of this.moves.placed(p)) {
        const n = this.node(id);
        if (!n.running || this.#group(n, p) === undefined || (this.#seen.get(`${id}:${p.index}`) ?? -1) !== want) return false;
      }
    }
    return true;
  }

  #describeState(markers: readonly boolean[]): string {
    return this.partitions
      .map((p) => {
        const l = this.leaderOf(p);
        const rs = this.moves.placed(p).map((id) => {
          const n = this.node(id);
          const g = this.#group(n, p);
          const st = g?.raw.status();
          const r = n.replicas?.replica(p.topic, p.partition);
          return `n${id}${n.running ? '' : '(down)'}:${st === undefined ? '-' : `${st.state[0]}${st.term}/c${st.commit}/a${g!.applied}`}/seen${this.#seen.get(`${id}:${p.index}`)}${r === undefined ? '' : `/oldest${r.localOldest}`}`;
        });
        return `p${p.index} marker ${markers[p.index] ? 'acked' : 'pending'} leader ${l?.id ?? '-'} applied max ${this.ledger.appliedMax(p.index)} [${rs.join(' ')}]`;
      })
      .join('; ');
  }
}

export function runHostSimulation(opts: HostSimOptions): Promise<HostSimResult> {
  return new HostSimulation(opts).run();
}
