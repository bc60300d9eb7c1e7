/**
 * The transport between Brook nodes: the only code that touches @grpc/grpc-js. The wire contract is
 * proto/raft.proto (Raft messages of every group, forwarded metadata proposals, log shipping) and
 * proto/forward.proto (forwarded appends, remote reads); their TypeScript types are generated into
 * generated/ (`npm run gen:proto`). Per-message limits: limits.ts. Every call is authenticated
 * (auth.ts: a cluster secret and/or mutual TLS, and membership). docs/transport.md describes it all.
 */
export { GrpcTransport } from './raft-transport.js';
export { GroupDispatcher } from './dispatcher.js';
export { metadataGroup, TransportError, } from './types.js';
export { appendBytesMax, appendEventsMax, eventRecordBytesMax, forwardDeadlineMsMax, indexMax, logChunkBytesDefault, logChunkBytesMax, readChunkBytesMax, readEventsMax, readWaitMsMax, termMax, termJumpMax, } from './limits.js';
export { DecodeError, decodeEntry, decodeHardState, decodeMessage, decodeSnapshot, encodeEntry, encodeHardState, encodeMessage, encodeSnapshot, } from './codec.js';
//# sourceMappingURL=index.js.map