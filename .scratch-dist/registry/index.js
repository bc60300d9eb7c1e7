export { validateEventTypeCreate } from './event-type-create.js';
export { validateEventTypeUpdate } from './event-type-update.js';
export { effectiveSchema } from './effective-schema.js';
export { SchemaValidatorCache } from './validator-cache.js';
export { partitionStrategyNames, enrichmentStrategyNames } from './strategies.js';
export { compareSchemaChange } from './schema-evolution.js';
export { bumpVersion } from './semver.js';
//# sourceMappingURL=index.js.map