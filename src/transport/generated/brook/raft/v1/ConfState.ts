// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface ConfState {
  'voters'?: (number | string | Long)[];
  'learners'?: (number | string | Long)[];
}

export interface ConfState__Output {
  'voters': (string)[];
  'learners': (string)[];
}
