import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AppendManyReply as _brook_forward_v1_AppendManyReply, AppendManyReply__Output as _brook_forward_v1_AppendManyReply__Output } from './brook/forward/v1/AppendManyReply.js';
import type { AppendManyRequest as _brook_forward_v1_AppendManyRequest, AppendManyRequest__Output as _brook_forward_v1_AppendManyRequest__Output } from './brook/forward/v1/AppendManyRequest.js';
import type { AppendReply as _brook_forward_v1_AppendReply, AppendReply__Output as _brook_forward_v1_AppendReply__Output } from './brook/forward/v1/AppendReply.js';
import type { AppendRequest as _brook_forward_v1_AppendRequest, AppendRequest__Output as _brook_forward_v1_AppendRequest__Output } from './brook/forward/v1/AppendRequest.js';
import type { AppendStreamReply as _brook_forward_v1_AppendStreamReply, AppendStreamReply__Output as _brook_forward_v1_AppendStreamReply__Output } from './brook/forward/v1/AppendStreamReply.js';
import type { AppendStreamRequest as _brook_forward_v1_AppendStreamRequest, AppendStreamRequest__Output as _brook_forward_v1_AppendStreamRequest__Output } from './brook/forward/v1/AppendStreamRequest.js';
import type { BaseCommand as _brook_forward_v1_BaseCommand, BaseCommand__Output as _brook_forward_v1_BaseCommand__Output } from './brook/forward/v1/BaseCommand.js';
import type { BoundsReply as _brook_forward_v1_BoundsReply, BoundsReply__Output as _brook_forward_v1_BoundsReply__Output } from './brook/forward/v1/BoundsReply.js';
import type { BoundsRequest as _brook_forward_v1_BoundsRequest, BoundsRequest__Output as _brook_forward_v1_BoundsRequest__Output } from './brook/forward/v1/BoundsRequest.js';
import type { ControlRequest as _brook_forward_v1_ControlRequest, ControlRequest__Output as _brook_forward_v1_ControlRequest__Output } from './brook/forward/v1/ControlRequest.js';
import type { ForwardClient as _brook_forward_v1_ForwardClient, ForwardDefinition as _brook_forward_v1_ForwardDefinition } from './brook/forward/v1/Forward.js';
import type { ReadChunk as _brook_forward_v1_ReadChunk, ReadChunk__Output as _brook_forward_v1_ReadChunk__Output } from './brook/forward/v1/ReadChunk.js';
import type { ReadRequest as _brook_forward_v1_ReadRequest, ReadRequest__Output as _brook_forward_v1_ReadRequest__Output } from './brook/forward/v1/ReadRequest.js';
import type { SealCommand as _brook_forward_v1_SealCommand, SealCommand__Output as _brook_forward_v1_SealCommand__Output } from './brook/forward/v1/SealCommand.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  brook: {
    forward: {
      v1: {
        AppendManyReply: MessageTypeDefinition<_brook_forward_v1_AppendManyReply, _brook_forward_v1_AppendManyReply__Output>
        AppendManyRequest: MessageTypeDefinition<_brook_forward_v1_AppendManyRequest, _brook_forward_v1_AppendManyRequest__Output>
        AppendReply: MessageTypeDefinition<_brook_forward_v1_AppendReply, _brook_forward_v1_AppendReply__Output>
        AppendRequest: MessageTypeDefinition<_brook_forward_v1_AppendRequest, _brook_forward_v1_AppendRequest__Output>
        AppendStatus: EnumTypeDefinition
        AppendStreamReply: MessageTypeDefinition<_brook_forward_v1_AppendStreamReply, _brook_forward_v1_AppendStreamReply__Output>
        AppendStreamRequest: MessageTypeDefinition<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamRequest__Output>
        BaseCommand: MessageTypeDefinition<_brook_forward_v1_BaseCommand, _brook_forward_v1_BaseCommand__Output>
        BoundsReply: MessageTypeDefinition<_brook_forward_v1_BoundsReply, _brook_forward_v1_BoundsReply__Output>
        BoundsRequest: MessageTypeDefinition<_brook_forward_v1_BoundsRequest, _brook_forward_v1_BoundsRequest__Output>
        ControlRequest: MessageTypeDefinition<_brook_forward_v1_ControlRequest, _brook_forward_v1_ControlRequest__Output>
        Forward: SubtypeConstructor<typeof grpc.Client, _brook_forward_v1_ForwardClient> & { service: _brook_forward_v1_ForwardDefinition }
        ReadChunk: MessageTypeDefinition<_brook_forward_v1_ReadChunk, _brook_forward_v1_ReadChunk__Output>
        ReadRequest: MessageTypeDefinition<_brook_forward_v1_ReadRequest, _brook_forward_v1_ReadRequest__Output>
        SealCommand: MessageTypeDefinition<_brook_forward_v1_SealCommand, _brook_forward_v1_SealCommand__Output>
      }
    }
  }
}

