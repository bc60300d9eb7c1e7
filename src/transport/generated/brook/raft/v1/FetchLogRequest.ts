// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface FetchLogRequest {
  'group'?: (number);
  'from_index'?: (number | string | Long);
  'to_index'?: (number | string | Long);
  'max_bytes'?: (number);
}

export interface FetchLogRequest__Output {
  'group': (number);
  'from_index': (string);
  'to_index': (string);
  'max_bytes': (number);
}
