/**
 * Compiled event validators, one per (event type, schema version), built on first use. Validation runs
 * for every published event, so the returned function does nothing but call ajv's compiled code; the
 * error text is only built on failure.
 *
 * The key also holds the compatibility mode (a mode change keeps the schema version but changes what
 * undeclared properties do), the category, and the version's created_at (a deleted and re-created
 * event type restarts at 1.0.0 with another schema; if forget() were ever missed, the stale validator
 * would still not be found).
 */
import type { EventType, EventTypeSchema } from '../metadata/types.js';
import { closeUndeclaredProperties, effectiveSchema } from './effective-schema.js';
import { createAjv, withRootId, type Ajv, type CompiledValidator } from './schema-compiler.js';
import { assert } from '../core/assert.js';

export type EventValidator = (event: unknown) => string | null;

/** Category undefined: the interface says events are not validated; the only demand is "an object". */
const acceptAnyObject: EventValidator = (event) =>
  typeof event === 'object' && event !== null && !Array.isArray(event) ? null : '#: must be a JSON object';

interface CacheEntry {
  validator: EventValidator;
  /** The object ajv cached the compiled code under; removeSchema needs it to free that code. */
  compiledSchema: object | undefined;
}

export class SchemaValidatorCache {
  readonly #ajv: Ajv = createAjv();
  /** event type name -> key -> entry; two levels so forget() drops one type without scanning all. */
  readonly #byEventType = new Map<string, Map<string, CacheEntry>>();

  validatorFor(eventType: EventType, schema: EventTypeSchema): EventValidator {
    const key = `${schema.version}|${eventType.compatibility_mode}|${eventType.category}|${schema.created_at}`;
    let entries = this.#byEventType.get(eventType.name);
    const hit = entries?.get(key);
    if (hit !== undefined) return hit.validator;
    const entry = this.#compile(eventType, schema);
    if (entries === undefined) {
      entries = new Map();
      this.#byEventType.set(eventType.name, entries);
    }
    entries.set(key, entry);
    return entry.validator;
  }

  forget(eventTypeName: string): void {
    const entries = this.#byEventType.get(eventTypeName);
    if (entries === undefined) return;
    for (const entry of entries.values()) {
      if (entry.compiledSchema !== undefined) this.#ajv.removeSchema(entry.compiledSchema);
    }
    this.#byEventType.delete(eventTypeName);
  }

  #compile(eventType: EventType, schema: EventTypeSchema): CacheEntry {
    if (eventType.category === 'undefined') return { validator: acceptAnyObject, compiledSchema: undefined };
    // The registry only stores schemas it has compiled, so a failure here is a broken invariant.
    const submitted: unknown = JSON.parse(schema.schema);
    assert(typeof submitted === 'object' && submitted !== null, `stored schema of ${eventType.name} is not an object`);
    const validationSchema = withRootId(closeUndeclaredProperties(
      effectiveSchema(eventType.category, submitted),
      eventType.compatibility_mode,
    ));
    const compiled = this.#ajv.compile(validationSchema);
    return { validator: eventValidator(compiled), compiledSchema: validationSchema };
  }
}

function eventValidator(compiled: CompiledValidator): EventValidator {
  return (event) => (compiled(event) ? null : describeFirstError(compiled));
}

/** `#/metadata/eid: must match format "uuid"`: the failing path as a JSON pointer, then ajv's reason. */
function describeFirstError(compiled: CompiledValidator): string {
  const error = compiled.errors?.[0];
  if (error === undefined) return '#: invalid';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params['missingProperty'] === 'string') {
    return `#${error.instancePath}/${escapeToken(params['missingProperty'])}: required property is missing`;
  }
  if (error.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
    return `#${error.instancePath}/${escapeToken(params['additionalProperty'])}: property is not declared in the schema`;
  }
  return `#${error.instancePath}: ${error.message ?? 'invalid'}`;
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
