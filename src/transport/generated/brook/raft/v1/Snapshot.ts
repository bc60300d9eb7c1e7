// Original file: proto/raft.proto

import type { SnapshotMetadata as _brook_raft_v1_SnapshotMetadata, SnapshotMetadata__Output as _brook_raft_v1_SnapshotMetadata__Output } from '../../../brook/raft/v1/SnapshotMetadata.js';

export interface Snapshot {
  'metadata'?: (_brook_raft_v1_SnapshotMetadata | null);
  'data'?: (Buffer | Uint8Array | string);
}

export interface Snapshot__Output {
  'metadata': (_brook_raft_v1_SnapshotMetadata__Output | null);
  'data': (Buffer);
}
