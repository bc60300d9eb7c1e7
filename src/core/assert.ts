/**
 * Invariant checks. A failed assertion means the program reached a state its authors believed
 * impossible; continuing could corrupt data, so the error is fatal (the composition root exits on it).
 * Expected failures (bad input, missing resources) are Problems, never assertions.
 */
export class InvariantError extends Error {
  override name = 'InvariantError';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(message);
}

export function unreachable(value: never, message = 'unreachable'): never {
  throw new InvariantError(`${message}: ${JSON.stringify(value)}`);
}

/**
 * A failed invariant, for checks on hot paths written `if (!cond) invariantFailed(`...`)`: the message
 * of `assert(cond, `... ${n} ...`)` is a template built on every call, passed or not (V8 does not
 * defer it), and a number in it is converted each time, which per entry and per batch of every publish
 * added up (docs/benchmarks.md, 2026-11-28).
 */
export function invariantFailed(message: string): never {
  throw new InvariantError(message);
}
