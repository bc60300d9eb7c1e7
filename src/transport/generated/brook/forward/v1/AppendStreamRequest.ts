// Original file: proto/forward.proto

import type { AppendManyRequest as _brook_forward_v1_AppendManyRequest, AppendManyRequest__Output as _brook_forward_v1_AppendManyRequest__Output } from '../../../brook/forward/v1/AppendManyRequest.js';
import type { AppendStreamRequest as _brook_forward_v1_AppendStreamRequest, AppendStreamRequest__Output as _brook_forward_v1_AppendStreamRequest__Output } from '../../../brook/forward/v1/AppendStreamRequest.js';
import type { Long } from '@grpc/proto-loader';

export interface AppendStreamRequest {
  'id'?: (number | string | Long);
  'request'?: (_brook_forward_v1_AppendManyRequest | null);
  'more'?: (_brook_forward_v1_AppendStreamRequest)[];
  'batches'?: (boolean);
}

export interface AppendStreamRequest__Output {
  'id': (string);
  'request': (_brook_forward_v1_AppendManyRequest__Output | null);
  'more': (_brook_forward_v1_AppendStreamRequest__Output)[];
  'batches': (boolean);
}
