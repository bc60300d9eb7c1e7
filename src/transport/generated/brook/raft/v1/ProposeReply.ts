// Original file: proto/raft.proto

import type { ProposeStatus as _brook_raft_v1_ProposeStatus, ProposeStatus__Output as _brook_raft_v1_ProposeStatus__Output } from '../../../brook/raft/v1/ProposeStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface ProposeReply {
  'status'?: (_brook_raft_v1_ProposeStatus);
  'index'?: (number | string | Long);
  'result'?: (Buffer | Uint8Array | string);
  'leader_hint'?: (number | string | Long);
  'detail'?: (string);
}

export interface ProposeReply__Output {
  'status': (_brook_raft_v1_ProposeStatus__Output);
  'index': (string);
  'result': (Buffer);
  'leader_hint': (string);
  'detail': (string);
}
