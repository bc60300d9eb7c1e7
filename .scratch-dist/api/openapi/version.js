/** The package version for the document's info.version (package.json, three folders up from dist/api/openapi/). */
import { readFileSync } from 'node:fs';
export function brookVersionForDocs() {
    try {
        const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
        return pkg.version ?? 'unknown';
    }
    catch {
        return 'unknown';
    }
}
//# sourceMappingURL=version.js.map