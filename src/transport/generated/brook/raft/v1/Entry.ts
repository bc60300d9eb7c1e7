// Original file: proto/raft.proto

import type { EntryType as _brook_raft_v1_EntryType, EntryType__Output as _brook_raft_v1_EntryType__Output } from '../../../brook/raft/v1/EntryType.js';
import type { Long } from '@grpc/proto-loader';

export interface Entry {
  'term'?: (number | string | Long);
  'index'?: (number | string | Long);
  'type'?: (_brook_raft_v1_EntryType);
  'data'?: (Buffer | Uint8Array | string);
}

export interface Entry__Output {
  'term': (string);
  'index': (string);
  'type': (_brook_raft_v1_EntryType__Output);
  'data': (Buffer);
}
