// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface IdentifyRequest {
  'from'?: (number | string | Long);
  'disk_id'?: (string);
}

export interface IdentifyRequest__Output {
  'from': (string);
  'disk_id': (string);
}
