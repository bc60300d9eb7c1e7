// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface StreamSummary {
  'batches'?: (number | string | Long);
}

export interface StreamSummary__Output {
  'batches': (string);
}
