export const categories = ['undefined', 'data', 'business'];
export const partitionStrategies = ['random', 'user_defined', 'hash'];
export const enrichmentStrategies = ['metadata_enrichment'];
export const compatibilityModes = ['compatible', 'forward', 'none'];
/** The built-in storage: this node's own RocksDB. */
export const defaultStorageId = 'default';
export const readFromValues = ['begin', 'end', 'cursors'];
/** The key triple (owning_application, event_types in any order, consumer_group) as one string. */
export function subscriptionKey(s) {
    return JSON.stringify([s.owning_application, [...new Set(s.event_types)].sort(), s.consumer_group]);
}
export const blacklistTypes = ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'];
//# sourceMappingURL=types.js.map