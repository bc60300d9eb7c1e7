// Original file: proto/raft.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { FetchLogRequest as _brook_raft_v1_FetchLogRequest, FetchLogRequest__Output as _brook_raft_v1_FetchLogRequest__Output } from '../../../brook/raft/v1/FetchLogRequest.js';
import type { IdentifyReply as _brook_raft_v1_IdentifyReply, IdentifyReply__Output as _brook_raft_v1_IdentifyReply__Output } from '../../../brook/raft/v1/IdentifyReply.js';
import type { IdentifyRequest as _brook_raft_v1_IdentifyRequest, IdentifyRequest__Output as _brook_raft_v1_IdentifyRequest__Output } from '../../../brook/raft/v1/IdentifyRequest.js';
import type { LogChunk as _brook_raft_v1_LogChunk, LogChunk__Output as _brook_raft_v1_LogChunk__Output } from '../../../brook/raft/v1/LogChunk.js';
import type { MessageBatch as _brook_raft_v1_MessageBatch, MessageBatch__Output as _brook_raft_v1_MessageBatch__Output } from '../../../brook/raft/v1/MessageBatch.js';
import type { ProposeReply as _brook_raft_v1_ProposeReply, ProposeReply__Output as _brook_raft_v1_ProposeReply__Output } from '../../../brook/raft/v1/ProposeReply.js';
import type { ProposeRequest as _brook_raft_v1_ProposeRequest, ProposeRequest__Output as _brook_raft_v1_ProposeRequest__Output } from '../../../brook/raft/v1/ProposeRequest.js';
import type { StreamSummary as _brook_raft_v1_StreamSummary, StreamSummary__Output as _brook_raft_v1_StreamSummary__Output } from '../../../brook/raft/v1/StreamSummary.js';

export interface RaftTransportClient extends grpc.Client {
  FetchLog(argument: _brook_raft_v1_FetchLogRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_raft_v1_LogChunk__Output>;
  FetchLog(argument: _brook_raft_v1_FetchLogRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_raft_v1_LogChunk__Output>;
  fetchLog(argument: _brook_raft_v1_FetchLogRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_raft_v1_LogChunk__Output>;
  fetchLog(argument: _brook_raft_v1_FetchLogRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_brook_raft_v1_LogChunk__Output>;
  
  Identify(argument: _brook_raft_v1_IdentifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  Identify(argument: _brook_raft_v1_IdentifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  Identify(argument: _brook_raft_v1_IdentifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  Identify(argument: _brook_raft_v1_IdentifyRequest, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  identify(argument: _brook_raft_v1_IdentifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  identify(argument: _brook_raft_v1_IdentifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  identify(argument: _brook_raft_v1_IdentifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  identify(argument: _brook_raft_v1_IdentifyRequest, callback: grpc.requestCallback<_brook_raft_v1_IdentifyReply__Output>): grpc.ClientUnaryCall;
  
  Propose(argument: _brook_raft_v1_ProposeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  Propose(argument: _brook_raft_v1_ProposeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  Propose(argument: _brook_raft_v1_ProposeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  Propose(argument: _brook_raft_v1_ProposeRequest, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  propose(argument: _brook_raft_v1_ProposeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  propose(argument: _brook_raft_v1_ProposeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  propose(argument: _brook_raft_v1_ProposeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  propose(argument: _brook_raft_v1_ProposeRequest, callback: grpc.requestCallback<_brook_raft_v1_ProposeReply__Output>): grpc.ClientUnaryCall;
  
  Stream(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  Stream(metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  Stream(options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  Stream(callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  stream(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  stream(metadata: grpc.Metadata, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  stream(options: grpc.CallOptions, callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  stream(callback: grpc.requestCallback<_brook_raft_v1_StreamSummary__Output>): grpc.ClientWritableStream<_brook_raft_v1_MessageBatch>;
  
}

export interface RaftTransportHandlers extends grpc.UntypedServiceImplementation {
  FetchLog: grpc.handleServerStreamingCall<_brook_raft_v1_FetchLogRequest__Output, _brook_raft_v1_LogChunk>;
  
  Identify: grpc.handleUnaryCall<_brook_raft_v1_IdentifyRequest__Output, _brook_raft_v1_IdentifyReply>;
  
  Propose: grpc.handleUnaryCall<_brook_raft_v1_ProposeRequest__Output, _brook_raft_v1_ProposeReply>;
  
  Stream: grpc.handleClientStreamingCall<_brook_raft_v1_MessageBatch__Output, _brook_raft_v1_StreamSummary>;
  
}

export interface RaftTransportDefinition extends grpc.ServiceDefinition {
  FetchLog: MethodDefinition<_brook_raft_v1_FetchLogRequest, _brook_raft_v1_LogChunk, _brook_raft_v1_FetchLogRequest__Output, _brook_raft_v1_LogChunk__Output>
  Identify: MethodDefinition<_brook_raft_v1_IdentifyRequest, _brook_raft_v1_IdentifyReply, _brook_raft_v1_IdentifyRequest__Output, _brook_raft_v1_IdentifyReply__Output>
  Propose: MethodDefinition<_brook_raft_v1_ProposeRequest, _brook_raft_v1_ProposeReply, _brook_raft_v1_ProposeRequest__Output, _brook_raft_v1_ProposeReply__Output>
  Stream: MethodDefinition<_brook_raft_v1_MessageBatch, _brook_raft_v1_StreamSummary, _brook_raft_v1_MessageBatch__Output, _brook_raft_v1_StreamSummary__Output>
}
