// Original file: proto/raft.proto

import type { ConfState as _brook_raft_v1_ConfState, ConfState__Output as _brook_raft_v1_ConfState__Output } from '../../../brook/raft/v1/ConfState.js';
import type { Long } from '@grpc/proto-loader';

export interface SnapshotMetadata {
  'index'?: (number | string | Long);
  'term'?: (number | string | Long);
  'conf_state'?: (_brook_raft_v1_ConfState | null);
}

export interface SnapshotMetadata__Output {
  'index': (string);
  'term': (string);
  'conf_state': (_brook_raft_v1_ConfState__Output | null);
}
