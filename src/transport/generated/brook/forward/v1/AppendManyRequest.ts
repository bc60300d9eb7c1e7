// Original file: proto/forward.proto

import type { AppendRequest as _brook_forward_v1_AppendRequest, AppendRequest__Output as _brook_forward_v1_AppendRequest__Output } from '../../../brook/forward/v1/AppendRequest.js';

export interface AppendManyRequest {
  'parts'?: (_brook_forward_v1_AppendRequest)[];
  'flow_id'?: (string);
}

export interface AppendManyRequest__Output {
  'parts': (_brook_forward_v1_AppendRequest__Output)[];
  'flow_id': (string);
}
