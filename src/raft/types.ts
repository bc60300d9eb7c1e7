/**
 * The values that cross the boundary of the Raft core: log entries, messages between peers, the
 * durable hard state, snapshots and cluster configurations.
 *
 * Terms and indexes are plain JavaScript numbers. They are exact up to 2^53 (about 9e15: a million
 * entries a second for 285 years), and the core asserts that every term and index it accepts is a
 * safe, non-negative integer. Node ids are positive safe integers; 0 means "no node" (no leader, no
 * vote).
 *
 * Every value here is treated as immutable once it has been handed over: the core never mutates a
 * message or an entry it received or emitted, so the host and the simulator may share them freely.
 */
import { assert, invariantFailed } from '../core/assert.js';

export type Term = number;
export type Index = number;
export type NodeId = number;

/** The absent node: no leader known, no vote cast. */
export const noNode: NodeId = 0;

export type EntryType = 'normal' | 'confChange';

export interface Entry {
  readonly term: Term;
  readonly index: Index;
  readonly type: EntryType;
  /** Opaque to the core for 'normal' entries; an encoded ConfChange for 'confChange' entries. */
  readonly data: Uint8Array;
}

/** The state that must be durable before any message that depends on it is sent. */
export interface HardState {
  readonly term: Term;
  readonly vote: NodeId;
  readonly commit: Index;
}

export const emptyHardState: HardState = { term: 0, vote: noNode, commit: 0 };

/** The configuration of a group: who votes and who only receives the log. Both lists are sorted. */
export interface ConfState {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

export interface SnapshotMetadata {
  readonly index: Index;
  readonly term: Term;
  /** The configuration in force at `index`. */
  readonly confState: ConfState;
}

export interface Snapshot {
  readonly metadata: SnapshotMetadata;
  /** The host's state machine image at `metadata.index`; opaque to the core. */
  readonly data: Uint8Array;
}

export const emptySnapshot: Snapshot = {
  metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } },
  data: new Uint8Array(0),
};

/**
 * A single-server membership change (Ongaro's thesis §4.1). Adding a voter that is already a learner
 * promotes it; adding a learner that is a voter demotes it. The leader accepts a new change only
 * when the previous one has been applied, so at most one is ever pending.
 */
export type ConfChangeType = 'addVoter' | 'addLearner' | 'removeNode';

export interface ConfChange {
  readonly type: ConfChangeType;
  readonly nodeId: NodeId;
}

export type MessageType =
  /** Leader → follower: entries after (index, logTerm), and the leader's commit index. */
  | 'app'
  /** Follower → leader: accepted up to `index`, or rejected `index` with a (rejectHint, logTerm) hint. */
  | 'appResp'
  /** Candidate → voter: vote for me in `term`; my log ends at (index, logTerm). */
  | 'vote'
  | 'voteResp'
  /** Pre-candidate → voter: would you vote for me in `term` (my term + 1)? Changes no one's term. */
  | 'preVote'
  | 'preVoteResp'
  /** Leader → follower: I am alive; commit is min(follower match, leader commit); context echoes reads. */
  | 'heartbeat'
  | 'heartbeatResp'
  /** Leader → follower: install this snapshot; the follower answers with an appResp. */
  | 'snap'
  /** Leader → transferee: start an election now, skipping Pre-Vote and the leader lease. */
  | 'timeoutNow'
  /** Follower → leader: a ReadIndex request with the caller's context. */
  | 'readIndex'
  /** Leader → follower: the read index for `context`, safe once applied locally. */
  | 'readIndexResp'
  /**
   * A member whose past term is unknown (Damage.termUnknown: it starts empty in a group its data
   * directory may have belonged to) → the other voters: what is your term? Answered by any member in
   * any state, changing nothing on the answerer (not even waking it from quiescence). `index` is 0 as
   * sent; a host that delivers it to the member that replaced the addressee on its node (a former
   * member of the metadata group) sets `index` to the addressee.
   */
  | 'termProbe'
  /**
   * The answer: `term` is the answerer's current term; `reject` when its own past term is unknown too,
   * or when it answers for a former member (`index`, as in the probe) without holding the configuration
   * entry that added it. The asker counts it in the place of the member asked (`index`, else `from`).
   */
  | 'termProbeResp';

/**
 * One message between peers. Fields a type does not use hold their zero value ('' / 0 / false / []).
 * The shape is flat, like etcd's raftpb.Message, so that it maps onto one protobuf message.
 */
export interface Message {
  readonly type: MessageType;
  readonly from: NodeId;
  readonly to: NodeId;
  readonly term: Term;
  readonly logTerm: Term;
  readonly index: Index;
  readonly entries: readonly Entry[];
  readonly commit: Index;
  readonly reject: boolean;
  readonly rejectHint: Index;
  /** ReadIndex request context, or `campaignTransfer` on votes caused by a leadership transfer. */
  readonly context: string;
  readonly snapshot: Snapshot | undefined;
  /**
   * A read lease field (src/broker/metadata-lease.ts), set and read only by the metadata group's host
   * around the core: the core never sets it, ignores it and copies it nowhere. Absent on the wire
   * from a build without leases.
   */
  readonly lease?: MessageLease;
}

/** See Message.lease: a leader's stamp and grant, or a follower's echo, ask and applied index. */
export interface MessageLease {
  readonly stamp: number;
  readonly seq: number;
  readonly index: Index;
  readonly released: Index;
}

/** The context a candidate puts on its votes when a leadership transfer told it to campaign. */
export const campaignTransfer = 'campaignTransfer';

/**
 * The context of the heartbeats by which a leader tells its followers that it quiesces: nothing is
 * under way, every member holds and has committed the whole log, and it sends no more heartbeats
 * until something wakes it (Raft.quiesce).
 */
export const quiesceContext = 'quiesce';

/**
 * The context a damaged member puts on its append rejections: its log may be shorter than the
 * leader's progress says (it lost entries it had acknowledged), so the leader forgets that member's
 * match and probes from its hint instead of taking the rejection for a stale one.
 */
export const damagedReject = 'damaged';

/**
 * The context a member puts on the appends it accepts while it is incomplete (RawNode.setIncomplete):
 * it holds the Raft log the leader counts, but not all of the data its host keeps beside that log (a
 * partition replica still fetching the retained log before its snapshot). The leader records it in
 * that member's progress (ProgressStatus.incomplete), so its host neither promotes such a learner nor
 * hands it the leadership.
 */
export const incompleteAck = 'incomplete';

/**
 * The context of an append that only carries the leader's commit index to a follower that has
 * acknowledged everything sent to it, or whose answer to the rest is on its way (no entries; the leader
 * replicating to it, not probing, and not waiting to hear whether it is still incomplete; a follower
 * that lacks the entries before it rejects it, answered): its answer would tell the leader nothing, so a
 * healthy, complete follower that accepts it sends none. Every other append is answered as before; a
 * follower of a build that does not know this context answers it too, which the leader takes as it
 * always did.
 */
export const commitOnlyAppend = 'commitOnly';

export type StateType = 'follower' | 'preCandidate' | 'candidate' | 'leader';

/**
 * What a member lost when its durable state was damaged (a corrupt or truncated log found at start, a
 * wiped data directory): before the damage it may have voted in terms up to `term` and acknowledged
 * entries up to `index` (0 where the host cannot tell). A damaged member neither votes nor campaigns
 * until a leader of a term >= `term` has brought its log past `index` (see Raft.#maybeRepaired).
 */
export interface Damage {
  readonly term: Term;
  readonly index: Index;
  /**
   * Nothing of its past is known, not even an upper bound of its terms (a wiped data directory has no
   * term ceiling): before it takes any append, heartbeat or snapshot it learns a term floor from a
   * majority of the other voters (termProbe; Raft.#probe). Absent: false.
   */
  readonly termUnknown?: boolean;
}

/** Volatile state the host may want to observe (not persisted). */
export interface SoftState {
  readonly lead: NodeId;
  readonly state: StateType;
}

/**
 * The answer to a ReadIndex request: once the host's applied index reaches `index`, a read of the
 * state machine reflects every write committed before the request was made (linearizable).
 */
export interface ReadState {
  readonly index: Index;
  readonly context: string;
}

/** Asserts that a term, an index or a count is a safe non-negative integer. */
export function assertIndex(n: number, what: string): void {
  if (!Number.isSafeInteger(n)) invariantFailed(`${what} is not a safe integer: ${n}`);
  if (!(n >= 0)) invariantFailed(`${what} is negative: ${n}`);
}

export function assertNodeId(id: NodeId, what: string): void {
  assert(Number.isSafeInteger(id), `${what} is not a safe integer: ${id}`);
  assert(id > 0, `${what} must be positive: ${id}`);
}

/** Bytes an entry counts for in size limits: its payload (the fixed fields are small and bounded). */
export function entryBytes(e: Entry): number {
  return e.data.byteLength;
}

export function entriesBytes(es: readonly Entry[]): number {
  let total = 0;
  for (const e of es) total += e.data.byteLength;
  return total;
}

export function isHardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

export function isEmptySnapshot(s: Snapshot | undefined): boolean {
  return s === undefined || s.metadata.index === 0;
}

/** Builds a message, filling every field the sender leaves out with its zero value. */
export function makeMessage(
  fields: Pick<Message, 'type' | 'from' | 'to' | 'term'> & Partial<Message>,
): Message {
  return {
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: '',
    snapshot: undefined,
    ...fields,
  };
}
