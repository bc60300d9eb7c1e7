/**
 * The transport between Brook nodes: the only code that touches @grpc/grpc-js. The wire contract is
 * proto/raft.proto (Raft messages of every group, forwarded metadata proposals, log shipping) and
 * proto/forward.proto (forwarded appends, remote reads); their TypeScript types are generated into
 * generated/ (`npm run gen:proto`). Per-message limits: limits.ts. Every call is authenticated
 * (auth.ts: a cluster secret and/or mutual TLS, and membership). docs/transport.md describes it all.
 */
export { GrpcTransport, type PeerAddress, type TransportOptions } from './raft-transport.js';
export { type ClusterCredentials, type TransportSecurity } from './auth.js';
export { GroupDispatcher, type DispatcherOptions } from './dispatcher.js';
export {
  metadataGroup,
  TransportError,
  type AppendAnswer,
  type AppendRequest,
  type BoundsAnswer,
  type BoundsRequest,
  type ControlAnswer,
  type ControlCommand,
  type ControlRequest,
  type FetchLogRequest,
  type ForwardAnswer,
  type ForwardedProposal,
  type GroupHandler,
  type GroupId,
  type GroupMessages,
  type LogChunk,
  type NodeHandler,
  type PeerIdentity,
  type ReadChunk,
  type ReadEvent,
  type ReadRequest,
  type TransportErrorKind,
  type TransportHandler,
  type TransportLogger,
} from './types.js';
export {
  appendBytesMax,
  appendEventsMax,
  eventRecordBytesMax,
  forwardDeadlineMsMax,
  indexMax,
  logChunkBytesDefault,
  logChunkBytesMax,
  readChunkBytesMax,
  readEventsMax,
  readWaitMsMax,
  termMax,
  termJumpMax,
} from './limits.js';
export {
  DecodeError,
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeSnapshot,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeSnapshot,
} from './codec.js';
