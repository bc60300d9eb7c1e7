/**
 * The registry's public face: the pure rules of event types (validation of create and update bodies,
 * effective schemas per category, schema evolution and versions) and the compiled-validator cache used
 * by publishing. No I/O and no clock: times are passed in.
 */
export type { RegistryOptions } from './registry-options.js';
export { validateEventTypeCreate } from './event-type-create.js';
export { validateEventTypeUpdate } from './event-type-update.js';
export { effectiveSchema } from './effective-schema.js';
export { SchemaValidatorCache } from './validator-cache.js';
export { partitionStrategyNames, enrichmentStrategyNames } from './strategies.js';
export { compareSchemaChange } from './schema-evolution.js';
export { bumpVersion } from './semver.js';
