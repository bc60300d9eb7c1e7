/**
 * Helpers shared by the storage tests (imported only by *.test.ts and the bench script).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
export async function tempDir(name) {
    const dir = await mkdtemp(join(tmpdir(), `brook-${name}-`));
    return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
export class ManualClock {
    now;
    constructor(now = 1_000_000) {
        this.now = now;
    }
    nowMs() {
        return this.now;
    }
    monotonicMs() {
        return this.now;
    }
}
export function ev(text) {
    return Buffer.from(text);
}
/** A promise with its resolver exposed, for holding writes open in tests. */
export function gate() {
    let open;
    const promise = new Promise((r) => (open = r));
    return { promise, open };
}
//# sourceMappingURL=test-support.js.map