/**
 * A small seeded pseudo-random generator for the simulator: xoshiro128** (Blackman & Vigna), seeded
 * through splitmix32 so that nearby seeds give unrelated streams. 32-bit integer arithmetic only
 * (Math.imul and >>> 0), so every run of a seed is bit-for-bit the same on every platform.
 */
import { assert } from '../core/assert.js';
function splitmix32(state) {
    state.s = (state.s + 0x9e3779b9) >>> 0;
    let z = state.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
}
function rotl(x, k) {
    return ((x << k) | (x >>> (32 - k))) >>> 0;
}
export class Prng {
    #a;
    #b;
    #c;
    #d;
    constructor(seed) {
        assert(Number.isSafeInteger(seed) && seed >= 0, `seed must be a non-negative safe integer: ${seed}`);
        // Fold both halves of a 53-bit seed in, so that seeds above 2^32 do not collide.
        const st = { s: (seed >>> 0) ^ Math.floor(seed / 2 ** 32) };
        this.#a = splitmix32(st);
        this.#b = splitmix32(st);
        this.#c = splitmix32(st);
        this.#d = splitmix32(st);
        if ((this.#a | this.#b | this.#c | this.#d) === 0)
            this.#a = 1; // the all-zero state is a fixed point
    }
    /** Uniform 32-bit unsigned integer. */
    nextU32() {
        const result = Math.imul(rotl(Math.imul(this.#b, 5) >>> 0, 7), 9) >>> 0;
        const t = (this.#b << 9) >>> 0;
        this.#c = (this.#c ^ this.#a) >>> 0;
        this.#d = (this.#d ^ this.#b) >>> 0;
        this.#b = (this.#b ^ this.#c) >>> 0;
        this.#a = (this.#a ^ this.#d) >>> 0;
        this.#c = (this.#c ^ t) >>> 0;
        this.#d = rotl(this.#d, 11);
        return result;
    }
    next() {
        return this.nextU32() / 2 ** 32;
    }
    /** Uniform integer in [0, n). */
    int(n) {
        assert(Number.isSafeInteger(n) && n > 0, `int(n) needs a positive integer, got ${n}`);
        return Math.floor(this.next() * n);
    }
    /** Uniform integer in [lo, hi]. */
    between(lo, hi) {
        assert(hi >= lo, `between(${lo}, ${hi})`);
        return lo + this.int(hi - lo + 1);
    }
    chance(p) {
        return this.next() < p;
    }
    pick(items) {
        assert(items.length > 0, 'pick from an empty list');
        return items[this.int(items.length)];
    }
    uuid() {
        const hex = (n) => n.toString(16).padStart(8, '0');
        const a = hex(this.nextU32());
        const b = hex(this.nextU32());
        const c = hex(this.nextU32());
        const d = hex(this.nextU32());
        return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${((parseInt(c[0], 16) & 3) | 8).toString(16)}${c.slice(1, 4)}-${c.slice(4)}${d}`;
    }
    /** An independent generator derived from this one (for sub-streams that must not perturb others). */
    fork() {
        return new Prng(this.nextU32() * 2 ** 21 + (this.nextU32() >>> 11));
    }
}
//# sourceMappingURL=prng.js.map