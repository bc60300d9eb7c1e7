// Original file: proto/forward.proto


export interface BoundsRequest {
  'group'?: (number);
  'topic'?: (number);
  'partition'?: (number);
}

export interface BoundsRequest__Output {
  'group': (number);
  'topic': (number);
  'partition': (number);
}
