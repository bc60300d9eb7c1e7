// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface GroupHeartbeat {
  'group'?: (number);
  'term'?: (number | string | Long);
  'commit'?: (number | string | Long);
  'context'?: (string);
}

export interface GroupHeartbeat__Output {
  'group': (number);
  'term': (string);
  'commit': (string);
  'context': (string);
}
