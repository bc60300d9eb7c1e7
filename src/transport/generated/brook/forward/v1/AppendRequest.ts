// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface AppendRequest {
  'group'?: (number);
  'topic'?: (number);
  'partition'?: (number);
  'epoch'?: (number | string | Long);
  'request_id'?: (string);
  'flow_id'?: (string);
  'deadline_ms'?: (number);
  'events'?: (Buffer | Uint8Array | string)[];
}

export interface AppendRequest__Output {
  'group': (number);
  'topic': (number);
  'partition': (number);
  'epoch': (string);
  'request_id': (string);
  'flow_id': (string);
  'deadline_ms': (number);
  'events': (Buffer)[];
}
