/**
 * Invariant checks. A failed assertion means the program reached a state its authors believed
 * impossible; continuing could corrupt data, so the error is fatal (the composition root exits on it).
 * Expected failures (bad input, missing resources) are Problems, never assertions.
 */
export class InvariantError extends Error {
    name = 'InvariantError';
}
export function assert(condition, message) {
    if (!condition)
        throw new InvariantError(message);
}
export function unreachable(value, message = 'unreachable') {
    throw new InvariantError(`${message}: ${JSON.stringify(value)}`);
}
//# sourceMappingURL=assert.js.map