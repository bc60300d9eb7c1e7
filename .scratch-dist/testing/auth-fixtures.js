/** TEST-ONLY: tokens for authentication tests: a static token file, bearer headers, scope sets. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
export const allScopes = ['svc.event_type.write', 'svc.config.write', 'svc.event_stream.write', 'svc.event_stream.read'];
/** Writes {"tokens": {...}} to a temporary file and returns its path. */
export function tokenFile(tokens) {
    const file = join(mkdtempSync(join(tmpdir(), 'brook-tokens-')), 'tokens.json');
    writeFileSync(file, JSON.stringify({ tokens }));
    return file;
}
export function bearer(token) {
    return { authorization: `Bearer ${token}` };
}
//# sourceMappingURL=auth-fixtures.js.map