/**
 * The Raft consensus core: a pure, deterministic state machine in the style of etcd's raft.
 *
 * Construct a RawNode over a Storage (the host's durable log), feed it ticks, messages and
 * proposals, and carry out each Ready in the order documented in rawnode.ts: persist, send,
 * apply, advance. A brand-new group's founding members first write `bootstrapState(voters)` into
 * their storage; a node joining later starts empty and is added with proposeConfChange.
 */
export type {
  ConfChange,
  ConfChangeType,
  ConfState,
  Damage,
  Entry,
  EntryType,
  HardState,
  Index,
  Message,
  MessageLease,
  MessageType,
  NodeId,
  ReadState,
  Snapshot,
  SnapshotMetadata,
  SoftState,
  StateType,
  Term,
} from './types.js';
export { campaignTransfer, emptyHardState, emptySnapshot, isEmptySnapshot, makeMessage, noNode, quiesceContext } from './types.js';
export type { RaftConfig } from './config.js';
export type { ProposalDropReason, ProposeResult } from './raft.js';
export { RawNode } from './rawnode.js';
export type { ProgressStatus, Ready, Status } from './rawnode.js';
export type { InitialState, Storage } from './storage.js';
export {
  CompactedError,
  MemoryStorage,
  SnapshotTemporarilyUnavailableError,
  UnavailableError,
} from './storage.js';
export { applyConfChangeToState, bootstrapState, decodeConfChange, encodeConfChange } from './confchange.js';
export type { ProgressState } from './progress.js';
