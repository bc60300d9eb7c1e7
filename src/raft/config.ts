/**
 * How a Raft node is set up. Every limit is explicit and named with its unit last; `withDefaults`
 * fills the ones a host leaves out and `validateConfig` asserts the relations between them.
 */
import { assert } from '../core/assert.js';
import type { Random } from '../core/ports.js';
import type { Storage } from './storage.js';
import type { Damage, Index, NodeId } from './types.js';
import { assertIndex, assertNodeId } from './types.js';

export interface RaftConfig {
  readonly id: NodeId;
  /** The durable log, hard state and snapshot (see storage.ts for the contract). */
  readonly storage: Storage;
  /**
   * The host's applied index at start: entries up to it are not delivered again. Must be at least
   * the storage's snapshot index, and `storage.initialState().confState` must be the configuration
   * as of this index. 0 (the default) for a fresh node.
   */
  readonly applied?: Index;
  /**
   * Ticks without hearing from a leader before a follower campaigns. The actual timeout is drawn
   * uniformly from [electionTicks, 2 * electionTicks) each time, so that nodes rarely collide.
   */
  readonly electionTicks: number;
  /** Ticks between the leader's heartbeats; must be well below electionTicks. */
  readonly heartbeatTicks: number;
  /** The source of election jitter; the simulator passes a seeded generator. */
  readonly random: Pick<Random, 'int'>;
  /** Pre-Vote (thesis §9.6): a partitioned node rejoining does not disrupt a healthy leader. */
  readonly preVote?: boolean;
  /**
   * CheckQuorum (thesis §6.2): a leader that has not heard from a majority for an election timeout
   * steps down, and followers that heard from a leader recently ignore votes (the leader lease that
   * makes Pre-Vote effective).
   */
  readonly checkQuorum?: boolean;
  /** Payload bytes per append message (at least one entry is always sent). */
  readonly appendBytesMax?: number;
  /** Entries per append message. */
  readonly appendEntriesMax?: number;
  /** Appends in flight to one follower in replicate state (the pipelining window). */
  readonly inflightAppendsMax?: number;
  /** Payload bytes in flight to one follower. */
  readonly inflightBytesMax?: number;
  /** Payload bytes of uncommitted entries the leader accepts before refusing proposals (backpressure). */
  readonly uncommittedBytesMax?: number;
  /** Payload bytes of committed entries handed out in one Ready. */
  readonly readyCommittedBytesMax?: number;
  /** ReadIndex requests waiting on one leader. */
  readonly pendingReadsMax?: number;
  /** Ticks a follower may stay in snapshot state without answering before the snapshot is resent. */
  readonly snapshotRetryTicks?: number;
  /**
   * Whether the leader's heartbeat round skips a member that appends are reaching anyway (true, the
   * default: it does not). When false, a member in replicate state that was sent an append and
   * accepted one since the last round, whose window is not full and that is not incomplete, gets no
   * heartbeat in that round: the append already reset its election timer and carried the commit
   * index, and its answer already counted for CheckQuorum. A round that carries a ReadIndex context
   * goes to every member. Off for a group whose owner reads more into heartbeats and answers (the
   * metadata group's read leases). False also drops the Raft messages such a group does not need:
   * ticks caught up at once make one heartbeat round, a commit broadcast to a member whose
   * acknowledgement is on its way is not answered, and an acknowledgement that commits nothing starts
   * no empty append (raft.ts).
   */
  readonly heartbeatWhileReplicating?: boolean;
  /**
   * The host found this member's durable state damaged (null, the default: it is not). Until a
   * healthy leader has repaired it the member grants no vote or pre-vote and never campaigns (nor
   * takes leadership in a transfer), but follows a leader and accepts its entries and snapshots. The
   * Ready in which the repair becomes durable says `repaired`; the host then forgets the damage.
   */
  readonly damaged?: Damage | null;
  /**
   * The group's voters as the host knows them (itself included or not), asked for their term by a
   * member whose damage says `termUnknown`: its own configuration is empty until a leader brings it.
   * Required then; ignored otherwise.
   */
  readonly termProbePeers?: readonly NodeId[];
}

export type ResolvedConfig = Required<RaftConfig>;

export function withDefaults(c: RaftConfig): ResolvedConfig {
  return {
    applied: 0,
    preVote: true,
    checkQuorum: true,
    appendBytesMax: 1024 * 1024,
    appendEntriesMax: 4096,
    inflightAppendsMax: 256,
    inflightBytesMax: 32 * 1024 * 1024,
    uncommittedBytesMax: 64 * 1024 * 1024,
    readyCommittedBytesMax: 64 * 1024 * 1024,
    pendingReadsMax: 4096,
    snapshotRetryTicks: 4 * c.electionTicks,
    heartbeatWhileReplicating: true,
    damaged: null,
    termProbePeers: [],
    ...stripUndefined(c),
  };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function validateConfig(c: ResolvedConfig): void {
  assertNodeId(c.id, 'raft config id');
  assertIndex(c.applied, 'raft config applied');
  const positive: Array<[string, number]> = [
    ['electionTicks', c.electionTicks],
    ['heartbeatTicks', c.heartbeatTicks],
    ['appendBytesMax', c.appendBytesMax],
    ['appendEntriesMax', c.appendEntriesMax],
    ['inflightAppendsMax', c.inflightAppendsMax],
    ['inflightBytesMax', c.inflightBytesMax],
    ['uncommittedBytesMax', c.uncommittedBytesMax],
    ['readyCommittedBytesMax', c.readyCommittedBytesMax],
    ['pendingReadsMax', c.pendingReadsMax],
    ['snapshotRetryTicks', c.snapshotRetryTicks],
  ];
  for (const [name, v] of positive) {
    assert(Number.isSafeInteger(v) && v > 0, `raft config ${name} must be a positive integer, got ${v}`);
  }
  assert(c.electionTicks > c.heartbeatTicks, 'electionTicks must exceed heartbeatTicks');
  assert(c.inflightBytesMax >= c.appendBytesMax, 'an append of appendBytesMax must fit the inflight window');
  if (c.damaged !== null) {
    assertIndex(c.damaged.term, 'raft config damaged.term');
    assertIndex(c.damaged.index, 'raft config damaged.index');
  }
  for (const id of c.termProbePeers) assertNodeId(id, 'raft config termProbePeers');
  // Without the voters to ask, a member whose past term is unknown would learn nothing and take appends at once.
  assert(c.damaged?.termUnknown !== true || c.termProbePeers.length > 0, 'a member whose past term is unknown needs termProbePeers (a group of one lists itself)');
}
