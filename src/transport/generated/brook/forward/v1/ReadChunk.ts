// Original file: proto/forward.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadChunk {
  'first_offset'?: (number | string | Long);
  'events'?: (Buffer | Uint8Array | string)[];
  'oldest'?: (number | string | Long);
  'newest'?: (number | string | Long);
  'epoch'?: (number | string | Long);
}

export interface ReadChunk__Output {
  'first_offset': (string);
  'events': (Buffer)[];
  'oldest': (string);
  'newest': (string);
  'epoch': (string);
}
