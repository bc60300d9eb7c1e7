// Original file: proto/raft.proto

import type { Message as _brook_raft_v1_Message, Message__Output as _brook_raft_v1_Message__Output } from '../../../brook/raft/v1/Message.js';
import type { GroupHeartbeat as _brook_raft_v1_GroupHeartbeat, GroupHeartbeat__Output as _brook_raft_v1_GroupHeartbeat__Output } from '../../../brook/raft/v1/GroupHeartbeat.js';
import type { Long } from '@grpc/proto-loader';

export interface MessageBatch {
  'from'?: (number | string | Long);
  'incarnation'?: (string);
  'messages'?: (_brook_raft_v1_Message)[];
  'heartbeats'?: (_brook_raft_v1_GroupHeartbeat)[];
  'heartbeat_responses'?: (_brook_raft_v1_GroupHeartbeat)[];
}

export interface MessageBatch__Output {
  'from': (string);
  'incarnation': (string);
  'messages': (_brook_raft_v1_Message__Output)[];
  'heartbeats': (_brook_raft_v1_GroupHeartbeat__Output)[];
  'heartbeat_responses': (_brook_raft_v1_GroupHeartbeat__Output)[];
}
