/** The real clock and randomness: the only place outside adapters that reads time or entropy. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
export const systemClock = {
    nowMs: () => Date.now(),
    monotonicMs: () => performance.now(),
};
export const systemRandom = {
    next: () => Math.random(),
    int: (n) => Math.floor(Math.random() * n),
    uuid: () => randomUUID(),
};
/** Bytes of the files under a directory (the RocksDB data); undefined when it cannot be read. */
export async function directoryBytes(dir) {
    try {
        let total = 0;
        for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
            if (!entry.isFile())
                continue;
            try {
                total += (await stat(join(entry.parentPath, entry.name))).size;
            }
            catch {
                // deleted meanwhile (a compaction): not counted
            }
        }
        return total;
    }
    catch {
        return undefined;
    }
}
/** Brook's version from package.json (shown by GET /metrics). */
export function brookVersion() {
    try {
        const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
        return pkg.version ?? 'unknown';
    }
    catch {
        return 'unknown';
    }
}
//# sourceMappingURL=system.js.map