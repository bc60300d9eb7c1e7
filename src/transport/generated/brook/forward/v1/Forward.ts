// Original file: proto/forward.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AppendManyReply as _brook_forward_v1_AppendManyReply, AppendManyReply__Output as _brook_forward_v1_AppendManyReply__Output } from '../../../brook/forward/v1/AppendManyReply.js';
import type { AppendManyRequest as _brook_forward_v1_AppendManyRequest, AppendManyRequest__Output as _brook_forward_v1_AppendManyRequest__Output } from '../../../brook/forward/v1/AppendManyRequest.js';
import type { AppendReply as _brook_forward_v1_AppendReply, AppendReply__Output as _brook_forward_v1_AppendReply__Output } from '../../../brook/forward/v1/AppendReply.js';
import type { AppendRequest as _brook_forward_v1_AppendRequest, AppendRequest__Output as _brook_forward_v1_AppendRequest__Output } from '../../../brook/forward/v1/AppendRequest.js';
import type { AppendStreamReply as _brook_forward_v1_AppendStreamReply, AppendStreamReply__Output as _brook_forward_v1_AppendStreamReply__Output } from '../../../brook/forward/v1/AppendStreamReply.js';
import type { AppendStreamRequest as _brook_forward_v1_AppendStreamRequest, AppendStreamRequest__Output as _brook_forward_v1_AppendStreamRequest__Output } from '../../../brook/forward/v1/AppendStreamRequest.js';
import type { BoundsReply as _brook_forward_v1_BoundsReply, BoundsReply__Output as _brook_forward_v1_BoundsReply__Output } from '../../../brook/forward/v1/BoundsReply.js';
import type { BoundsRequest as _brook_forward_v1_BoundsRequest, BoundsRequest__Output as _brook_forward_v1_BoundsRequest__Output } from '../../../brook/forward/v1/BoundsRequest.js';
import type { ControlRequest as _brook_forward_v1_ControlRequest, ControlRequest__Output as _brook_forward_v1_ControlRequest__Output } from '../../../brook/forward/v1/ControlRequest.js';
import type { ReadChunk as _brook_forward_v1_ReadChunk, ReadChunk__Output as _brook_forward_v1_ReadChunk__Output } from '../../../brook/forward/v1/ReadChunk.js';
import type { ReadRequest as _brook_forward_v1_ReadRequest, ReadRequest__Output as _brook_forward_v1_ReadRequest__Output } from '../../../brook/forward/v1/ReadRequest.js';

export interface ForwardClient extends grpc.Client {
  Append(argument: _brook_forward_v1_AppendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Append(argument: _brook_forward_v1_AppendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Append(argument: _brook_forward_v1_AppendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Append(argument: _brook_forward_v1_AppendRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  append(argument: _brook_forward_v1_AppendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  append(argument: _brook_forward_v1_AppendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  append(argument: _brook_forward_v1_AppendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  append(argument: _brook_forward_v1_AppendRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  
  AppendMany(argument: _brook_forward_v1_AppendManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  AppendMany(argument: _brook_forward_v1_AppendManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  AppendMany(argument: _brook_forward_v1_AppendManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  AppendMany(argument: _brook_forward_v1_AppendManyRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  appendMany(argument: _brook_forward_v1_AppendManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  appendMany(argument: _brook_forward_v1_AppendManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  appendMany(argument: _brook_forward_v1_AppendManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  appendMany(argument: _brook_forward_v1_AppendManyRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendManyReply__Output>): grpc.ClientUnaryCall;
  
  AppendStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamReply__Output>;
  AppendStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamReply__Output>;
  appendStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamReply__Output>;
  appendStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamReply__Output>;
  
  Bounds(argument: _brook_forward_v1_BoundsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  Bounds(argument: _brook_forward_v1_BoundsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  Bounds(argument: _brook_forward_v1_BoundsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  Bounds(argument: _brook_forward_v1_BoundsRequest, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  bounds(argument: _brook_forward_v1_BoundsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  bounds(argument: _brook_forward_v1_BoundsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  bounds(argument: _brook_forward_v1_BoundsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  bounds(argument: _brook_forward_v1_BoundsRequest, callback: grpc.requestCallback<_brook_forward_v1_BoundsReply__Output>): grpc.ClientUnaryCall;
  
  Control(argument: _brook_forward_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Control(argument: _brook_forward_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Control(argument: _brook_forward_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  Control(argument: _brook_forward_v1_ControlRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  control(argument: _brook_forward_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  control(argument: _brook_forward_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  control(argument: _brook_forward_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  control(argument: _brook_forward_v1_ControlRequest, callback: grpc.requestCallback<_brook_forward_v1_AppendReply__Output>): grpc.ClientUnaryCall;
  
  Read(argument: _brook_forward_v1_ReadRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_forward_v1_ReadChunk__Output>;
  Read(argument: _brook_forward_v1_ReadRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_forward_v1_ReadChunk__Output>;
  read(argument: _brook_forward_v1_ReadRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_forward_v1_ReadChunk__Output>;
  read(argument: _brook_forward_v1_ReadRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_forward_v1_ReadChunk__Output>;
  
}

export interface ForwardHandlers extends grpc.UntypedServiceImplementation {
  Append: grpc.handleUnaryCall<_brook_forward_v1_AppendRequest__Output, _brook_forward_v1_AppendReply>;
  
  AppendMany: grpc.handleUnaryCall<_brook_forward_v1_AppendManyRequest__Output, _brook_forward_v1_AppendManyReply>;
  
  AppendStream: grpc.handleBidiStreamingCall<_brook_forward_v1_AppendStreamRequest__Output, _brook_forward_v1_AppendStreamReply>;
  
  Bounds: grpc.handleUnaryCall<_brook_forward_v1_BoundsRequest__Output, _brook_forward_v1_BoundsReply>;
  
  Control: grpc.handleUnaryCall<_brook_forward_v1_ControlRequest__Output, _brook_forward_v1_AppendReply>;
  
  Read: grpc.handleServerStreamingCall<_brook_forward_v1_ReadRequest__Output, _brook_forward_v1_ReadChunk>;
  
}

export interface ForwardDefinition extends grpc.ServiceDefinition {
  Append: MethodDefinition<_brook_forward_v1_AppendRequest, _brook_forward_v1_AppendReply, _brook_forward_v1_AppendRequest__Output, _brook_forward_v1_AppendReply__Output>
  AppendMany: MethodDefinition<_brook_forward_v1_AppendManyRequest, _brook_forward_v1_AppendManyReply, _brook_forward_v1_AppendManyRequest__Output, _brook_forward_v1_AppendManyReply__Output>
  AppendStream: MethodDefinition<_brook_forward_v1_AppendStreamRequest, _brook_forward_v1_AppendStreamReply, _brook_forward_v1_AppendStreamRequest__Output, _brook_forward_v1_AppendStreamReply__Output>
  Bounds: MethodDefinition<_brook_forward_v1_BoundsRequest, _brook_forward_v1_BoundsReply, _brook_forward_v1_BoundsRequest__Output, _brook_forward_v1_BoundsReply__Output>
  Control: MethodDefinition<_brook_forward_v1_ControlRequest, _brook_forward_v1_AppendReply, _brook_forward_v1_ControlRequest__Output, _brook_forward_v1_AppendReply__Output>
  Read: MethodDefinition<_brook_forward_v1_ReadRequest, _brook_forward_v1_ReadChunk, _brook_forward_v1_ReadRequest__Output, _brook_forward_v1_ReadChunk__Output>
}
