// Original file: proto/raft.proto

import type { MessageType as _brook_raft_v1_MessageType, MessageType__Output as _brook_raft_v1_MessageType__Output } from '../../../brook/raft/v1/MessageType.js';
import type { Entry as _brook_raft_v1_Entry, Entry__Output as _brook_raft_v1_Entry__Output } from '../../../brook/raft/v1/Entry.js';
import type { Snapshot as _brook_raft_v1_Snapshot, Snapshot__Output as _brook_raft_v1_Snapshot__Output } from '../../../brook/raft/v1/Snapshot.js';
import type { Lease as _brook_raft_v1_Lease, Lease__Output as _brook_raft_v1_Lease__Output } from '../../../brook/raft/v1/Lease.js';
import type { Long } from '@grpc/proto-loader';

export interface Message {
  'type'?: (_brook_raft_v1_MessageType);
  'from'?: (number | string | Long);
  'to'?: (number | string | Long);
  'term'?: (number | string | Long);
  'log_term'?: (number | string | Long);
  'index'?: (number | string | Long);
  'entries'?: (_brook_raft_v1_Entry)[];
  'commit'?: (number | string | Long);
  'reject'?: (boolean);
  'reject_hint'?: (number | string | Long);
  'context'?: (string);
  'snapshot'?: (_brook_raft_v1_Snapshot | null);
  'group'?: (number);
  'lease'?: (_brook_raft_v1_Lease | null);
}

export interface Message__Output {
  'type': (_brook_raft_v1_MessageType__Output);
  'from': (string);
  'to': (string);
  'term': (string);
  'log_term': (string);
  'index': (string);
  'entries': (_brook_raft_v1_Entry__Output)[];
  'commit': (string);
  'reject': (boolean);
  'reject_hint': (string);
  'context': (string);
  'snapshot': (_brook_raft_v1_Snapshot__Output | null);
  'group': (number);
  'lease': (_brook_raft_v1_Lease__Output | null);
}
