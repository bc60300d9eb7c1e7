// Original file: proto/forward.proto

import type { AppendManyReply as _brook_forward_v1_AppendManyReply, AppendManyReply__Output as _brook_forward_v1_AppendManyReply__Output } from '../../../brook/forward/v1/AppendManyReply.js';
import type { Long } from '@grpc/proto-loader';

export interface AppendStreamReply {
  'id'?: (number | string | Long);
  'reply'?: (_brook_forward_v1_AppendManyReply | null);
}

export interface AppendStreamReply__Output {
  'id': (string);
  'reply': (_brook_forward_v1_AppendManyReply__Output | null);
}
