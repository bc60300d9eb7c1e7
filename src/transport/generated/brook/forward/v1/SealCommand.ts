// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface SealCommand {
  'timeline'?: (string);
  'floor'?: (number | string | Long);
}

export interface SealCommand__Output {
  'timeline': (string);
  'floor': (string);
}
