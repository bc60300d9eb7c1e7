import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { ConfState as _brook_raft_v1_ConfState, ConfState__Output as _brook_raft_v1_ConfState__Output } from './brook/raft/v1/ConfState.js';
import type { Entry as _brook_raft_v1_Entry, Entry__Output as _brook_raft_v1_Entry__Output } from './brook/raft/v1/Entry.js';
import type { FetchLogRequest as _brook_raft_v1_FetchLogRequest, FetchLogRequest__Output as _brook_raft_v1_FetchLogRequest__Output } from './brook/raft/v1/FetchLogRequest.js';
import type { FounderIdentity as _brook_raft_v1_FounderIdentity, FounderIdentity__Output as _brook_raft_v1_FounderIdentity__Output } from './brook/raft/v1/FounderIdentity.js';
import type { GroupHeartbeat as _brook_raft_v1_GroupHeartbeat, GroupHeartbeat__Output as _brook_raft_v1_GroupHeartbeat__Output } from './brook/raft/v1/GroupHeartbeat.js';
import type { HardState as _brook_raft_v1_HardState, HardState__Output as _brook_raft_v1_HardState__Output } from './brook/raft/v1/HardState.js';
import type { IdentifyReply as _brook_raft_v1_IdentifyReply, IdentifyReply__Output as _brook_raft_v1_IdentifyReply__Output } from './brook/raft/v1/IdentifyReply.js';
import type { IdentifyRequest as _brook_raft_v1_IdentifyRequest, IdentifyRequest__Output as _brook_raft_v1_IdentifyRequest__Output } from './brook/raft/v1/IdentifyRequest.js';
import type { Lease as _brook_raft_v1_Lease, Lease__Output as _brook_raft_v1_Lease__Output } from './brook/raft/v1/Lease.js';
import type { LogChunk as _brook_raft_v1_LogChunk, LogChunk__Output as _brook_raft_v1_LogChunk__Output } from './brook/raft/v1/LogChunk.js';
import type { Message as _brook_raft_v1_Message, Message__Output as _brook_raft_v1_Message__Output } from './brook/raft/v1/Message.js';
import type { MessageBatch as _brook_raft_v1_MessageBatch, MessageBatch__Output as _brook_raft_v1_MessageBatch__Output } from './brook/raft/v1/MessageBatch.js';
import type { ProposeReply as _brook_raft_v1_ProposeReply, ProposeReply__Output as _brook_raft_v1_ProposeReply__Output } from './brook/raft/v1/ProposeReply.js';
import type { ProposeRequest as _brook_raft_v1_ProposeRequest, ProposeRequest__Output as _brook_raft_v1_ProposeRequest__Output } from './brook/raft/v1/ProposeRequest.js';
import type { RaftTransportClient as _brook_raft_v1_RaftTransportClient, RaftTransportDefinition as _brook_raft_v1_RaftTransportDefinition } from './brook/raft/v1/RaftTransport.js';
import type { Snapshot as _brook_raft_v1_Snapshot, Snapshot__Output as _brook_raft_v1_Snapshot__Output } from './brook/raft/v1/Snapshot.js';
import type { SnapshotMetadata as _brook_raft_v1_SnapshotMetadata, SnapshotMetadata__Output as _brook_raft_v1_SnapshotMetadata__Output } from './brook/raft/v1/SnapshotMetadata.js';
import type { StreamSummary as _brook_raft_v1_StreamSummary, StreamSummary__Output as _brook_raft_v1_StreamSummary__Output } from './brook/raft/v1/StreamSummary.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  brook: {
    raft: {
      v1: {
        ConfState: MessageTypeDefinition<_brook_raft_v1_ConfState, _brook_raft_v1_ConfState__Output>
        Entry: MessageTypeDefinition<_brook_raft_v1_Entry, _brook_raft_v1_Entry__Output>
        EntryType: EnumTypeDefinition
        FetchLogRequest: MessageTypeDefinition<_brook_raft_v1_FetchLogRequest, _brook_raft_v1_FetchLogRequest__Output>
        FounderIdentity: MessageTypeDefinition<_brook_raft_v1_FounderIdentity, _brook_raft_v1_FounderIdentity__Output>
        GroupHeartbeat: MessageTypeDefinition<_brook_raft_v1_GroupHeartbeat, _brook_raft_v1_GroupHeartbeat__Output>
        HardState: MessageTypeDefinition<_brook_raft_v1_HardState, _brook_raft_v1_HardState__Output>
        IdentifyReply: MessageTypeDefinition<_brook_raft_v1_IdentifyReply, _brook_raft_v1_IdentifyReply__Output>
        IdentifyRequest: MessageTypeDefinition<_brook_raft_v1_IdentifyRequest, _brook_raft_v1_IdentifyRequest__Output>
        Lease: MessageTypeDefinition<_brook_raft_v1_Lease, _brook_raft_v1_Lease__Output>
        LogChunk: MessageTypeDefinition<_brook_raft_v1_LogChunk, _brook_raft_v1_LogChunk__Output>
        Message: MessageTypeDefinition<_brook_raft_v1_Message, _brook_raft_v1_Message__Output>
        MessageBatch: MessageTypeDefinition<_brook_raft_v1_MessageBatch, _brook_raft_v1_MessageBatch__Output>
        MessageType: EnumTypeDefinition
        ProposeReply: MessageTypeDefinition<_brook_raft_v1_ProposeReply, _brook_raft_v1_ProposeReply__Output>
        ProposeRequest: MessageTypeDefinition<_brook_raft_v1_ProposeRequest, _brook_raft_v1_ProposeRequest__Output>
        ProposeStatus: EnumTypeDefinition
        RaftTransport: SubtypeConstructor<typeof grpc.Client, _brook_raft_v1_RaftTransportClient> & { service: _brook_raft_v1_RaftTransportDefinition }
        Snapshot: MessageTypeDefinition<_brook_raft_v1_Snapshot, _brook_raft_v1_Snapshot__Output>
        SnapshotMetadata: MessageTypeDefinition<_brook_raft_v1_SnapshotMetadata, _brook_raft_v1_SnapshotMetadata__Output>
        StreamSummary: MessageTypeDefinition<_brook_raft_v1_StreamSummary, _brook_raft_v1_StreamSummary__Output>
      }
    }
  }
}

