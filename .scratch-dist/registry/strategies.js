/**
 * The registries served by GET /registry/partition-strategies and /registry/enrichment-strategies.
 * They are the same lists the event-type rules accept, so what the registry advertises and what it
 * validates against cannot drift apart.
 */
import { enrichmentStrategies, partitionStrategies } from '../metadata/types.js';
export const partitionStrategyNames = Object.freeze([...partitionStrategies]);
export const enrichmentStrategyNames = Object.freeze([...enrichmentStrategies]);
//# sourceMappingURL=strategies.js.map