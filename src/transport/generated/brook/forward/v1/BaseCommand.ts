// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface BaseCommand {
  'base'?: (number | string | Long);
}

export interface BaseCommand__Output {
  'base': (string);
}
