// Original file: proto/forward.proto

import type { AppendManyReply as _brook_forward_v1_AppendManyReply, AppendManyReply__Output as _brook_forward_v1_AppendManyReply__Output } from '../../../brook/forward/v1/AppendManyReply.js';
import type { AppendStreamReply as _brook_forward_v1_AppendStreamReply, AppendStreamReply__Output as _brook_forward_v1_AppendStreamReply__Output } from '../../../brook/forward/v1/AppendStreamReply.js';
import type { Long } from '@grpc/proto-loader';

export interface AppendStreamReply {
  'id'?: (number | string | Long);
  'reply'?: (_brook_forward_v1_AppendManyReply | null);
  'more'?: (_brook_forward_v1_AppendStreamReply)[];
  'batches'?: (boolean);
}

export interface AppendStreamReply__Output {
  'id': (string);
  'reply': (_brook_forward_v1_AppendManyReply__Output | null);
  'more': (_brook_forward_v1_AppendStreamReply__Output)[];
  'batches': (boolean);
}
