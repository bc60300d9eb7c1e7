/** limit/offset query parameters of the paged lists (schema list, subscription list): 400 when malformed. */
import { pageLimitMax } from './limits.js';
import { problems } from './problem.js';
export function parsePaging(query) {
    const num = (name, dflt, min, max) => {
        const raw = query[name];
        if (raw === undefined || raw === '')
            return dflt;
        const text = String(raw);
        if (!/^\d+$/.test(text))
            throw problems.badRequest(`Query parameter ${name} must be a non-negative integer, got "${text}"`);
        const n = Number(text);
        if (n < min || n > max)
            throw problems.badRequest(`Query parameter ${name} must be within [${min}, ${max}], got ${n}`);
        return n;
    };
    return { limit: num('limit', 20, 1, pageLimitMax), offset: num('offset', 0, 0, Number.MAX_SAFE_INTEGER) };
}
//# sourceMappingURL=paging.js.map