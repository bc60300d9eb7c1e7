/**
 * The one place that configures ajv, so the registry's "is this schema valid" check and the publish
 * path's validators agree on every option.
 *
 * - ajv-draft-04: the interface fixes JSON Schema draft 04.
 * - strict: false: draft 04 allows unknown keywords (x-extensible-enum, example ...) and schemas written
 *   for the original service use them; strict mode would refuse such schemas.
 * - addUsedSchema: false: a schema's "id" is not registered globally, so two versions (or two event
 *   types) with the same id can both be compiled.
 * - allErrors: false: validation stops at the first error; only the first one is reported anyway.
 * - logger: false: pure code does not write to the console (unknown formats are ignored, not logged).
 * - strictNumbers: true: a number beyond the double range (1e400) parses to Infinity, which ajv would
 *   accept as "number" and JSON.stringify would then store as null, so the stored event would violate
 *   its own schema. Non-finite numbers fail "number" and "integer" instead.
 * - code.regExp: `pattern` and `patternProperties` run on a linear-time engine (linear-regexp.ts), never
 *   on V8's backtracking one; a pattern it cannot run makes compilation fail with the reason.
 * - code.optimize: false: ajv's optimisation passes over the generated code are quadratic in the
 *   schema's size (1,000 properties: 0.7-1.1 s to compile, 2,000: 4 s, blocking the event loop at
 *   create and at the first publish) and bought no measurable validation speed (about 1.5 µs per
 *   typical event either way); without them, 1,000 properties compile in about 70 ms.
 * - enum: a Set lookup for scalar values (ajv's own enum compares each value in turn: a 60,000-value
 *   enum cost 60,000 comparisons per event), and the draft-04 meta-schema without enum's
 *   `uniqueItems`, which ajv checks in O(n²) (22 s for 60,000 values); uniqueness is checked in linear
 *   time at schema creation instead (schema-limits.ts).
 */
import Ajv04Module from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';
import { linearRegExp, UnsupportedPatternError } from './linear-regexp.js';
import { commonDateTime, commonUuid, withFastPath } from './fast-formats.js';

// Both packages are CommonJS with `module.exports = fn; exports.default = fn`; under NodeNext the
// default import is module.exports at run time while the typings describe `.default`. Take whichever
// is callable so the code is right under both readings.
type AjvClass = typeof Ajv04Module.default;
const Ajv04: AjvClass =
  typeof Ajv04Module === 'function' ? (Ajv04Module as unknown as AjvClass) : Ajv04Module.default;
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats =
  typeof addFormatsModule === 'function' ? (addFormatsModule as unknown as AddFormats) : addFormatsModule.default;

export type Ajv = InstanceType<AjvClass>;
export type CompiledValidator = ReturnType<Ajv['compile']>;

/** ajv's RegExpEngine: called with (pattern, flags); the u flag is implied (linear-regexp.ts). */
const regExp = Object.assign((pattern: string) => linearRegExp(pattern), { code: 'linearRegExp' });

const draft04Id = 'http://json-schema.org/draft-04/schema';

/** The draft-04 meta-schema as ajv-draft-04 ships it, minus enum's quadratic uniqueItems. */
const metaSchema: object = (() => {
  const stock = new Ajv04({ strict: false, logger: false }).getSchema(draft04Id)?.schema;
  if (typeof stock !== 'object' || stock === null) throw new Error('ajv-draft-04 has no draft-04 meta-schema');
  const copy = structuredClone(stock) as { properties: { enum: Record<string, unknown> } };
  delete copy.properties.enum['uniqueItems'];
  return copy;
})();

/** JSON equality (key order of objects does not matter), for enum members that are objects or arrays. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return ka.length === Object.keys(bo).length && ka.every((k) => Object.hasOwn(bo, k) && jsonEqual((a as Record<string, unknown>)[k], bo[k]));
}

const enumError = 'must be equal to one of the allowed values';

/** The enum keyword, answering as ajv's does (same message and params), in constant time for scalars. */
function setEnum(values: unknown[]) {
  if (values.length === 0) throw new Error('enum must have non-empty array');
  const scalars = new Set<unknown>();
  const composites: unknown[] = [];
  for (const v of values) {
    if (typeof v === 'object' && v !== null) composites.push(v);
    else scalars.add(v);
  }
  const check = (data: unknown): boolean => {
    const ok = typeof data === 'object' && data !== null ? composites.some((c) => jsonEqual(c, data)) : scalars.has(data);
    check.errors = ok ? null : [{ keyword: 'enum', message: enumError, params: { allowedValues: values } }];
    return ok;
  };
  check.errors = null as null | object[];
  return check;
}

export function createAjv(): Ajv {
  const ajv = new Ajv04({
    strict: false,
    strictNumbers: true,
    addUsedSchema: false,
    allErrors: false,
    logger: false,
    meta: false,
    code: { regExp, optimize: false },
  });
  ajv.addMetaSchema(metaSchema, draft04Id, false);
  // As ajv-draft-04 does for its stock meta-schema: "$schema": "http://json-schema.org/schema#" means draft-04.
  (ajv.refs as Record<string, unknown>)['http://json-schema.org/schema'] = draft04Id;
  ajv.removeKeyword('enum');
  ajv.addKeyword({ keyword: 'enum', schemaType: 'array', compile: setEnum as never });
  addFormats(ajv);
  // date-time and uuid (every event's metadata has both) read their common shape directly and ask
  // ajv-formats' own check about the rest: the same answers, several times faster (fast-formats.ts).
  const formats = ajv.formats as Record<string, { validate: (s: string) => boolean; compare?: unknown } | RegExp | undefined>;
  const dateTime = formats['date-time'];
  const uuid = formats['uuid'];
  if (dateTime === undefined || dateTime instanceof RegExp || !(uuid instanceof RegExp)) throw new Error('ajv-formats: date-time or uuid not as expected');
  ajv.addFormat('date-time', { ...dateTime, validate: withFastPath(commonDateTime, dateTime.validate) } as never);
  ajv.addFormat('uuid', withFastPath(commonUuid, (s) => uuid.test(s)));
  return ajv;
}

/**
 * ajv resolves `"$ref": "#"` (a recursive schema, valid draft-04) only against a root with an id: with
 * addUsedSchema off, a root without one answers "can't resolve reference # from id #". A root without
 * its own id is compiled as a shallow copy that has one, in a namespace nobody uses (RFC 2606); its
 * other references resolve as before (same-document ones against this root, remote ones not at all).
 */
export function withRootId(schema: object): object {
  return typeof (schema as Record<string, unknown>)['id'] === 'string' ? schema : { id: 'https://brook.invalid/schema.json', ...schema };
}

/** A separate instance for checking submitted schemas, so checks never share state with validators. */
let checker: Ajv | undefined;
let checksByChecker = 0;
/**
 * ajv keeps some per-instance state across compilations even after removeSchema (its code-generation
 * scope of formats and patterns), so the checker is replaced now and then to keep memory bounded over
 * a long-running registry. Creating an instance costs about a millisecond.
 */
const checksPerCheckerMax = 1000;

export interface SchemaCompileError {
  reason: string;
  /** The schema is valid, but one of its patterns cannot run in linear time. */
  unsupportedPattern: boolean;
}

/**
 * Compiles `schema` once to prove that it is a valid draft-04 schema whose references resolve and
 * whose patterns run in linear time. Returns null, or the reason. The compiled function is discarded
 * and removed from ajv's cache so repeated checks do not accumulate memory.
 */
export function schemaCompileError(schema: object): SchemaCompileError | null {
  if (checker === undefined || checksByChecker >= checksPerCheckerMax) {
    checker = createAjv();
    checksByChecker = 0;
  }
  checksByChecker += 1;
  const rooted = withRootId(schema);
  try {
    checker.compile(rooted);
    return null;
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err), unsupportedPattern: err instanceof UnsupportedPatternError };
  } finally {
    checker.removeSchema(rooted);
  }
}
