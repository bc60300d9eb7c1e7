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
 */
import Ajv04Module from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';
import { linearRegExp, UnsupportedPatternError } from './linear-regexp.js';

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

export function createAjv(): Ajv {
  const ajv = new Ajv04({ strict: false, strictNumbers: true, addUsedSchema: false, allErrors: false, logger: false, code: { regExp } });
  addFormats(ajv);
  return ajv;
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
  try {
    checker.compile(schema);
    return null;
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err), unsupportedPattern: err instanceof UnsupportedPatternError };
  } finally {
    checker.removeSchema(schema);
  }
}
