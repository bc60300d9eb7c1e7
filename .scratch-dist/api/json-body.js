/** Request bodies arrive as raw Buffers (see app.ts) and are parsed here, so every route answers malformed JSON with the same 400 Problem. */
import { problems } from '../core/problem.js';
export function parseJsonBody(body) {
    if (!Buffer.isBuffer(body) || body.length === 0)
        throw problems.malformedJson('A JSON request body is required');
    try {
        return JSON.parse(body.toString('utf8'));
    }
    catch (err) {
        throw problems.malformedJson(`Malformed JSON: ${err.message}`);
    }
}
//# sourceMappingURL=json-body.js.map