// Original file: proto/raft.proto

import type { FounderIdentity as _brook_raft_v1_FounderIdentity, FounderIdentity__Output as _brook_raft_v1_FounderIdentity__Output } from '../../../brook/raft/v1/FounderIdentity.js';
import type { Long } from '@grpc/proto-loader';

export interface IdentifyReply {
  'node_id'?: (number | string | Long);
  'disk_id'?: (string);
  'cluster_id'?: (string);
  'founders'?: (_brook_raft_v1_FounderIdentity)[];
}

export interface IdentifyReply__Output {
  'node_id': (string);
  'disk_id': (string);
  'cluster_id': (string);
  'founders': (_brook_raft_v1_FounderIdentity__Output)[];
}
