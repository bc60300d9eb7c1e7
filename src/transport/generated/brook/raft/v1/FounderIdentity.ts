// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface FounderIdentity {
  'id'?: (number | string | Long);
  'disk_id'?: (string);
}

export interface FounderIdentity__Output {
  'id': (string);
  'disk_id': (string);
}
