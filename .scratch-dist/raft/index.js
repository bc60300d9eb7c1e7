export { campaignTransfer, emptyHardState, emptySnapshot, isEmptySnapshot, makeMessage, noNode, quiesceContext } from './types.js';
export { RawNode } from './rawnode.js';
export { CompactedError, MemoryStorage, SnapshotTemporarilyUnavailableError, UnavailableError, } from './storage.js';
export { applyConfChangeToState, bootstrapState, decodeConfChange, encodeConfChange } from './confchange.js';
//# sourceMappingURL=index.js.map