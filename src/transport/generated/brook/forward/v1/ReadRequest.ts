// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadRequest {
  'group'?: (number);
  'topic'?: (number);
  'partition'?: (number);
  'after_offset'?: (number | string | Long);
  'max_events'?: (number);
  'max_bytes'?: (number);
  'wait_ms'?: (number);
  'follow'?: (boolean);
  'flow_id'?: (string);
}

export interface ReadRequest__Output {
  'group': (number);
  'topic': (number);
  'partition': (number);
  'after_offset': (string);
  'max_events': (number);
  'max_bytes': (number);
  'wait_ms': (number);
  'follow': (boolean);
  'flow_id': (string);
}
