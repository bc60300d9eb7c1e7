// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface Lease {
  'stamp'?: (number | string);
  'seq'?: (number | string | Long);
  'index'?: (number | string | Long);
  'released'?: (number | string | Long);
}

export interface Lease__Output {
  'stamp': (number);
  'seq': (string);
  'index': (string);
  'released': (string);
}
