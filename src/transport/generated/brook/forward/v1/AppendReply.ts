// Original file: proto/forward.proto

import type { AppendStatus as _brook_forward_v1_AppendStatus, AppendStatus__Output as _brook_forward_v1_AppendStatus__Output } from '../../../brook/forward/v1/AppendStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface AppendReply {
  'status'?: (_brook_forward_v1_AppendStatus);
  'epoch'?: (number | string | Long);
  'first_offset'?: (number | string | Long);
  'last_offset'?: (number | string | Long);
  'leader_hint'?: (number | string | Long);
  'detail'?: (string);
  'sealed_for'?: (string);
}

export interface AppendReply__Output {
  'status': (_brook_forward_v1_AppendStatus__Output);
  'epoch': (string);
  'first_offset': (string);
  'last_offset': (string);
  'leader_hint': (string);
  'detail': (string);
  'sealed_for': (string);
}
