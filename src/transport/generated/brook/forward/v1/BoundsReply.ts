// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface BoundsReply {
  'oldest'?: (number | string | Long);
  'newest'?: (number | string | Long);
  'epoch'?: (number | string | Long);
  'leader'?: (number | string | Long);
}

export interface BoundsReply__Output {
  'oldest': (string);
  'newest': (string);
  'epoch': (string);
  'leader': (string);
}
