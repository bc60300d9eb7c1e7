// Original file: proto/raft.proto

import type { Long } from '@grpc/proto-loader';

export interface ProposeRequest {
  'from'?: (number | string | Long);
  'command'?: (Buffer | Uint8Array | string);
  'flow_id'?: (string);
  'deadline_ms'?: (number);
}

export interface ProposeRequest__Output {
  'from': (string);
  'command': (Buffer);
  'flow_id': (string);
  'deadline_ms': (number);
}
