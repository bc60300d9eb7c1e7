// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface HardState {
  'term'?: (number | string | Long);
  'vote'?: (number | string | Long);
  'commit'?: (number | string | Long);
}

export interface HardState__Output {
  'term': (string);
  'vote': (string);
  'commit': (string);
}
