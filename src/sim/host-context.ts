/**
 * What the parts of the host simulation (clients, nemesis) see of it: virtual time and the event
 * queue, the nodes, the network, the ledger of batches, and the statistics a run reports.
 */
import type { AppendAnswer, ForwardedAppend } from '../broker/partition-replicas.js';
import type { NodeId } from '../raft/index.js';
import type { SimHostNode } from './host-node.js';
import type { Network } from './network.js';
import type { PartitionLedger } from './partition-ledger.js';
import type { Prng } from './prng.js';
import type { CrashKind } from './sim-disk.js';

/** One partition of the simulated event type, and its Raft group. */
export interface SimPartition {
  readonly index: number;
  readonly topic: number;
  readonly partition: number;
  readonly group: number;
  /** Its founding voters. */
  readonly founders: readonly NodeId[];
  /**
   * The nodes of the voters of its placement as stored in metadata (replica moves change them); the
   * first is the preferred leader. The placement itself lists member ids (host-moves.ts).
   */
  replicas: readonly NodeId[];
}

export interface HostSimStats {
  events: number;
  messages: number;
  /** Snapshot messages sent. */
  snapshots: number;
  /** Snapshots a member stored (installed). */
  snapshotsStored: number;
  /** Crashes of a node while it fetched the retained log before a snapshot (the nemesis aims some crashes there). */
  historyFetchCrashes: number;
  /** Crashes of a node while it fetched the log before a snapshot (one per replica fetching), and starts that fetch again. */
  historyFetchStops: number;
  historyFetchResumed: number;
  /** Replica opens refused for now (a damaged raft log no reachable replica could repair yet; retried). */
  opensRefused: number;
  /** Log-shipping streams opened, and those that delivered every chunk to the end. */
  logFetches: number;
  logFetchesDone: number;
  forwards: number;
  /** Forwarded calls that carried the parts of one request for several partitions. */
  groupedForwards: number;
  elections: number;
  /**
   * Granted votes delivered to a candidate that has moved on to a later term: the chances the
   * workload gives a vote counted from an older term (a broken rule) to elect someone.
   */
  staleGrants: number;
  /** Moments a leader's majority matched an entry of an earlier term above its commit (group-watch.ts). */
  oldTermQuorums: number;
  /** Learners a partition group's leader proposed to make voters (PromotedUnrepaired looks at each). */
  promotions: number;
  /** Promotions (and rejoins) a partition group's leader recorded in the placement (PromotedUnrepaired looks at each). */
  promotionsRecorded: number;
  /** Term probes answered by a new member for its node's former member (ProbeAnswerUnadded looks at each). */
  probeAnswersForFormer: number;
  /** Term probes for a former member refused by its node's new member, not yet in its configuration (the window ProbeAnswerUnadded is for). */
  probesBeforeAdded: number;
  /** Fsyncs that took a latency spike. */
  syncSpikes: number;
  batchesAcked: number;
  batchesFailed: number;
  batchesUnknown: number;
  retries: number;
  crashes: number;
  midWriteCrashes: number;
  prefixCrashes: number;
  lostTailCrashes: number;
  /** Nodes restarted on a wiped data directory. */
  wipes: number;
  /** Of those, the scripted wipe of a member that only a deposed leader reaches (nemesis wipeBesideDeposed). */
  /**
   * Of the wipes, those of a node whose member a move in flight adds and the metadata has promoted
   * (the group may not have made it a voter yet: the move goes on without it, replica-move-plan.ts).
   */
  wipesOfPromoted: number;
  wipesBesideDeposed: number;
  /**
   * Nodes whose disk lost the metadata group's records only (nemesis lostMetadata), and of those the
   * starts that opened the metadata group with the member id the node ran before (the rule checked).
   */
  metadataLosses: number;
  membersKept: number;
  /**
   * Of metadataLosses, those drawn while some node ran a new metadata member (its directory wiped):
   * the damaged member learns its floor with a new member answering for its node's former one.
   */
  metadataLossesBesideNew: number;
  /** Of those, on five nodes, while the wiped node's new member was not yet in the metadata configuration (two damaged at once). */
  metadataLossesBesideUnadded: number;
  /**
   * Partition members of wiped directories the metadata leader began to replace by the member the
   * directory runs now (partition-members.ts: a move on the same node), and replacements carried out
   * to the end (the former member's removal recorded).
   */
  replacementsStarted: number;
  replacementsDone: number;
  fullDisks: number;
  refusedWrites: number;
  /** Batches told failed because the disk refused them (the leader may have sent them already). */
  refusedBatches: number;
  failedSyncs: number;
  skews: number;
  storms: number;
  transfers: number;
  /**
   * Replica moves the operator started, moves cancelled (by the operator, or by a replacement whose
   * move's new member was wiped), and the operator's moves finished (the removal recorded).
   */
  moves: number;
  movesCancelled: number;
  movesDone: number;
  /** Configuration changes the movers proposed, and leaderships a leaving leader handed away. */
  moveConfChanges: number;
  moveTransfers: number;
  /**
   * Retention passes a node ran over its replicas (during chaos, each node on its own clock), events
   * they removed, and logs before an installed snapshot fetched back to the end (history).
   */
  retentionPasses: number;
  retentionRemoved: number;
  historyFetched: number;
  /** Such fetches given up (no replica held that log any more): the replica reads from its snapshot on. */
  historyAbandoned: number;
  /** Remote reads (the transport's Read service) the nodes made over the simulated network, and those that failed (link cut, server crashed or refused). */
  remoteReads: number;
  remoteReadsFailed: number;
  /** Of those, the calls a server reset before serving them (during chaos; host-cluster.ts, `readResetRate`). */
  remoteReadResets: number;
  /** Consumers' streams opened, ended by an error, left on purpose to resume elsewhere; events received (through a node holding no voter of the partition). */
  consumerStreams: number;
  consumerErrors: number;
  consumerResumes: number;
  consumerEvents: number;
  consumerRemoteEvents: number;
  /** Consumers told their cursor expired (retention removed the events after it): they start again at the oldest offset. */
  consumerExpired: number;
  /**
   * Subscription consumers (host-subscriptions.ts): streams opened, ended by an error, left to resume
   * elsewhere; events delivered (through a node holding no voter of the partition); commits asked,
   * acknowledged, refused, late or repeated, sent through another node than the stream's, sent after
   * the stream's node crashed; cursor tools run during chaos, and those refused (422, 503).
   */
  subStreams: number;
  subStreamErrors: number;
  subResumes: number;
  subEvents: number;
  subRemoteEvents: number;
  subCommits: number;
  subCommitsAcked: number;
  subCommitsRefused: number;
  subLateCommits: number;
  subCommitsElsewhere: number;
  subCommitsAfterCrash: number;
  cursorTools: number;
  cursorToolsRefused: number;
  /** Metadata registers: writes and reads asked, writes acknowledged. */
  metadataWrites: number;
  metadataReads: number;
  /** Metadata reads a follower served under its read lease, without a round. */
  metadataLeaseReads: number;
  /** Episodes of the scripted lease schedules (host-lease-probe.ts; seeds with read leases). */
  leaseProbes: number;
  metadataAcked: number;
  /** Node-level heartbeats sent, and groups that quiesced and woke (host statistics summed at the end). */
  pings: number;
  quiesced: number;
  woken: number;
  recoveryMsMax: number;
  virtualMs: number;
}

export function emptyStats(): HostSimStats {
  return {
    events: 0,
    messages: 0,
    snapshots: 0,
    snapshotsStored: 0,
    opensRefused: 0,
    historyFetchCrashes: 0,
    historyFetchStops: 0,
    historyFetchResumed: 0,
    logFetches: 0,
    logFetchesDone: 0,
    forwards: 0,
    groupedForwards: 0,
    elections: 0,
    staleGrants: 0,
    oldTermQuorums: 0,
    promotions: 0,
    promotionsRecorded: 0,
    probeAnswersForFormer: 0,
    probesBeforeAdded: 0,
    syncSpikes: 0,
    batchesAcked: 0,
    batchesFailed: 0,
    batchesUnknown: 0,
    retries: 0,
    crashes: 0,
    midWriteCrashes: 0,
    prefixCrashes: 0,
    lostTailCrashes: 0,
    wipes: 0,
    wipesBesideDeposed: 0,
    wipesOfPromoted: 0,
    metadataLosses: 0,
    metadataLossesBesideNew: 0,
    metadataLossesBesideUnadded: 0,
    membersKept: 0,
    replacementsStarted: 0,
    replacementsDone: 0,
    fullDisks: 0,
    refusedWrites: 0,
    refusedBatches: 0,
    failedSyncs: 0,
    skews: 0,
    storms: 0,
    transfers: 0,
    moves: 0,
    movesCancelled: 0,
    movesDone: 0,
    moveConfChanges: 0,
    moveTransfers: 0,
    retentionPasses: 0,
    retentionRemoved: 0,
    historyFetched: 0,
    historyAbandoned: 0,
    remoteReads: 0,
    remoteReadsFailed: 0,
    remoteReadResets: 0,
    consumerStreams: 0,
    consumerErrors: 0,
    consumerResumes: 0,
    consumerEvents: 0,
    consumerRemoteEvents: 0,
    consumerExpired: 0,
    subStreams: 0,
    subStreamErrors: 0,
    subResumes: 0,
    subEvents: 0,
    subRemoteEvents: 0,
    subCommits: 0,
    subCommitsAcked: 0,
    subCommitsRefused: 0,
    subLateCommits: 0,
    subCommitsElsewhere: 0,
    subCommitsAfterCrash: 0,
    cursorTools: 0,
    cursorToolsRefused: 0,
    metadataWrites: 0,
    metadataReads: 0,
    metadataLeaseReads: 0,
    leaseProbes: 0,
    metadataAcked: 0,
    pings: 0,
    quiesced: 0,
    woken: 0,
    recoveryMsMax: 0,
    virtualMs: 0,
  };
}

export interface HostSimContext {
  readonly rng: Prng;
  readonly net: Network;
  readonly ledger: PartitionLedger;
  readonly stats: HostSimStats;
  readonly partitions: readonly SimPartition[];
  /** Whether faults are being injected (clients pause while the run checks recovery). */
  readonly chaos: boolean;
  /**
   * Between a round's chaos and its calm, while faults are healed but calm has not begun: a move's
   * promotion recorded then may still be followed by the wipe of its new member (host-moves.ts).
   */
  readonly promotionWindow: boolean;
  /** Whether disks may lose fsynced data. */
  readonly lostTail: boolean;
  nowMs(): number;
  /** Schedules `fn`; with `node`, void if that node crashed meanwhile. */
  at(delayMs: number, fn: () => void, node?: SimHostNode, inc?: number): void;
  log(line: string): void;
  node(id: NodeId): SimHostNode;
  nodes(): readonly SimHostNode[];
  running(): SimHostNode[];
  /** The member of `p`'s group that leads it with the highest term, among running nodes. */
  leaderOf(p: SimPartition): SimHostNode | undefined;
  crash(node: SimHostNode, how: CrashKind, restartAfterMs: number | undefined): void;
  /**
   * The node's disk loses every record of the metadata group (and its marker file) but keeps its
   * partition records; restarted after `restartAfterMs`, it must keep its member id (host-cluster.ts).
   */
  loseMetadata(node: SimHostNode, restartAfterMs: number): void;
  /** Nodes that lost fsynced writes and whose groups are not all repaired yet. */
  readonly damaged: ReadonlySet<NodeId>;
  /** Whether a move in flight adds a member of the node whose promotion is stored (host-moves.ts). */
  promotedOn(node: NodeId): boolean;
  /** The operator moves a replica or cancels a move (host-moves.ts); says what it did. */
  moveReplica(): string;
  /** A forwarded append served by a node as its transport does (host-cluster.ts). */
  appendAt(node: SimHostNode, from: NodeId, req: ForwardedAppend): Promise<AppendAnswer>;
  /** A check failed inside an asynchronous callback: the run stops after the current event. */
  fail(err: unknown): void;
}
