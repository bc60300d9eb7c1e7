// Original file: proto/forward.proto

import type { AppendReply as _brook_forward_v1_AppendReply, AppendReply__Output as _brook_forward_v1_AppendReply__Output } from '../../../brook/forward/v1/AppendReply.js';

export interface AppendManyReply {
  'replies'?: (_brook_forward_v1_AppendReply)[];
}

export interface AppendManyReply__Output {
  'replies': (_brook_forward_v1_AppendReply__Output)[];
}
