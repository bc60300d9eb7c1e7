/**
 * The transport between Brook nodes: the only code that touches @grpc/grpc-js. The wire contract is
 * proto/raft.proto; its TypeScript types are generated into generated/ (`npm run gen:proto`).
 */
export {
  GrpcTransport,
  forwardDeadlineMsMax,
  type ForwardAnswer,
  type ForwardedProposal,
  type PeerAddress,
  type PeerIdentity,
  type TransportHandler,
  type TransportLogger,
  type TransportOptions,
} from './raft-transport.js';
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
