// Original file: proto/raft.proto

import type { Entry as _brook_raft_v1_Entry, Entry__Output as _brook_raft_v1_Entry__Output } from '../../../brook/raft/v1/Entry.js';

export interface LogChunk {
  'entries'?: (_brook_raft_v1_Entry)[];
}

export interface LogChunk__Output {
  'entries': (_brook_raft_v1_Entry__Output)[];
}
