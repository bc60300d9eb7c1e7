// Original file: proto/forward.proto

import type { SealCommand as _brook_forward_v1_SealCommand, SealCommand__Output as _brook_forward_v1_SealCommand__Output } from '../../../brook/forward/v1/SealCommand.js';
import type { BaseCommand as _brook_forward_v1_BaseCommand, BaseCommand__Output as _brook_forward_v1_BaseCommand__Output } from '../../../brook/forward/v1/BaseCommand.js';
import type { Long } from '@grpc/proto-loader';

export interface ControlRequest {
  'group'?: (number);
  'topic'?: (number);
  'partition'?: (number);
  'epoch'?: (number | string | Long);
  'flow_id'?: (string);
  'deadline_ms'?: (number);
  'seal'?: (_brook_forward_v1_SealCommand | null);
  'base'?: (_brook_forward_v1_BaseCommand | null);
  'command'?: "seal"|"base";
}

export interface ControlRequest__Output {
  'group': (number);
  'topic': (number);
  'partition': (number);
  'epoch': (string);
  'flow_id': (string);
  'deadline_ms': (number);
  'seal'?: (_brook_forward_v1_SealCommand__Output | null);
  'base'?: (_brook_forward_v1_BaseCommand__Output | null);
  'command'?: "seal"|"base";
}
