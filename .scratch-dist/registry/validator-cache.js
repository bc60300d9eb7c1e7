import { closeUndeclaredProperties, effectiveSchema } from './effective-schema.js';
import { createAjv, withRootId } from './schema-compiler.js';
import { assert } from '../core/assert.js';
/** Category undefined: the interface says events are not validated; the only demand is "an object". */
const acceptAnyObject = (event) => typeof event === 'object' && event !== null && !Array.isArray(event) ? null : '#: must be a JSON object';
export class SchemaValidatorCache {
    #ajv = createAjv();
    /** event type name -> key -> entry; two levels so forget() drops one type without scanning all. */
    #byEventType = new Map();
    validatorFor(eventType, schema) {
        const key = `${schema.version}|${eventType.compatibility_mode}|${eventType.category}|${schema.created_at}`;
        let entries = this.#byEventType.get(eventType.name);
        const hit = entries?.get(key);
        if (hit !== undefined)
            return hit.validator;
        const entry = this.#compile(eventType, schema);
        if (entries === undefined) {
            entries = new Map();
            this.#byEventType.set(eventType.name, entries);
        }
        entries.set(key, entry);
        return entry.validator;
    }
    forget(eventTypeName) {
        const entries = this.#byEventType.get(eventTypeName);
        if (entries === undefined)
            return;
        for (const entry of entries.values()) {
            if (entry.compiledSchema !== undefined)
                this.#ajv.removeSchema(entry.compiledSchema);
        }
        this.#byEventType.delete(eventTypeName);
    }
    #compile(eventType, schema) {
        if (eventType.category === 'undefined')
            return { validator: acceptAnyObject, compiledSchema: undefined };
        // The registry only stores schemas it has compiled, so a failure here is a broken invariant.
        const submitted = JSON.parse(schema.schema);
        assert(typeof submitted === 'object' && submitted !== null, `stored schema of ${eventType.name} is not an object`);
        const validationSchema = withRootId(closeUndeclaredProperties(effectiveSchema(eventType.category, submitted), eventType.compatibility_mode));
        const compiled = this.#ajv.compile(validationSchema);
        return { validator: eventValidator(compiled), compiledSchema: validationSchema };
    }
}
function eventValidator(compiled) {
    return (event) => (compiled(event) ? null : describeFirstError(compiled));
}
/** `#/metadata/eid: must match format "uuid"`: the failing path as a JSON pointer, then ajv's reason. */
function describeFirstError(compiled) {
    const error = compiled.errors?.[0];
    if (error === undefined)
        return '#: invalid';
    const params = error.params;
    if (error.keyword === 'required' && typeof params['missingProperty'] === 'string') {
        return `#${error.instancePath}/${escapeToken(params['missingProperty'])}: required property is missing`;
    }
    if (error.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
        return `#${error.instancePath}/${escapeToken(params['additionalProperty'])}: property is not declared in the schema`;
    }
    return `#${error.instancePath}: ${error.message ?? 'invalid'}`;
}
function escapeToken(token) {
    return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
//# sourceMappingURL=validator-cache.js.map