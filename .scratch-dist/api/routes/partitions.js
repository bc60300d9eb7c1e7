import { problems } from '../../core/problem.js';
import { toOffset } from '../../core/offset.js';
import { cursorShapeError } from '../../consumption/cursors.js';
import { parseJsonBody } from '../json-body.js';
function bodyArray(body, what) {
    const parsed = parseJsonBody(body);
    if (!Array.isArray(parsed))
        throw problems.unprocessable(`The body must be a JSON array of ${what}`);
    return parsed;
}
function asCursor(c, where) {
    const err = cursorShapeError(c, where);
    if (err !== null)
        throw problems.unprocessable(err);
    return c;
}
export const partitionRoutes = async (app, { deps }) => {
    const { cursors } = deps;
    app.get('/event-types/:name/partitions', async (request) => {
        const rec = deps.eventTypes.record(request.params.name);
        deps.access.checkRead(request.principal, rec.eventType);
        const consumed = new Map();
        if (request.query.cursors !== undefined) {
            let parsed;
            try {
                parsed = JSON.parse(request.query.cursors);
            }
            catch {
                throw problems.badRequest('Query parameter cursors must be a URL-encoded JSON array of cursors');
            }
            if (!Array.isArray(parsed))
                throw problems.badRequest('Query parameter cursors must be a JSON array of cursors');
            parsed.forEach((c, i) => {
                const cur = asCursor(c, `cursors[${i}]`);
                consumed.set(cur.partition, cursors.resolve(rec, cur.partition, cur.offset));
            });
        }
        return rec.storage.partitions.map((p) => cursors.partitionView(rec, p, consumed.get(p)));
    });
    app.get('/event-types/:name/partitions/:partition', async (request) => {
        const rec = deps.eventTypes.record(request.params.name);
        deps.access.checkRead(request.principal, rec.eventType);
        const { partition } = request.params;
        if (!rec.storage.partitions.includes(partition)) {
            throw problems.notFound(`Partition "${partition}" does not exist in event type "${rec.eventType.name}"`);
        }
        const consumed = request.query.consumed_offset;
        return cursors.partitionView(rec, partition, consumed === undefined ? undefined : cursors.resolve(rec, partition, consumed));
    });
    app.post('/event-types/:name/cursor-distances', async (request) => {
        const rec = deps.eventTypes.record(request.params.name);
        deps.access.checkRead(request.principal, rec.eventType);
        const queries = bodyArray(request.body, 'cursor distance queries');
        return queries.map((q, i) => {
            if (q === null || typeof q !== 'object')
                throw problems.unprocessable(`Item ${i} must be an object with initial_cursor and final_cursor`);
            const o = q;
            const initial = asCursor(o['initial_cursor'], `[${i}].initial_cursor`);
            const final = asCursor(o['final_cursor'], `[${i}].final_cursor`);
            if (initial.partition !== final.partition) {
                throw problems.unprocessable(`[${i}]: initial_cursor and final_cursor must name the same partition`);
            }
            const a = cursors.resolve(rec, initial.partition, initial.offset);
            const b = cursors.resolve(rec, final.partition, final.offset);
            return { initial_cursor: initial, final_cursor: final, distance: b - a };
        });
    });
    app.post('/event-types/:name/cursors-lag', async (request) => {
        const rec = deps.eventTypes.record(request.params.name);
        deps.access.checkRead(request.principal, rec.eventType);
        const list = bodyArray(request.body, 'cursors');
        return list.map((c, i) => {
            const cur = asCursor(c, `[${i}]`);
            return cursors.partitionView(rec, cur.partition, cursors.resolve(rec, cur.partition, cur.offset));
        });
    });
    app.post('/event-types/:name/shifted-cursors', async (request) => {
        const rec = deps.eventTypes.record(request.params.name);
        deps.access.checkRead(request.principal, rec.eventType);
        const list = bodyArray(request.body, 'shifted cursors');
        return list.map((c, i) => {
            const cur = asCursor(c, `[${i}]`);
            const shift = c['shift'];
            if (typeof shift !== 'number' || !Number.isSafeInteger(shift)) {
                throw problems.unprocessable(`[${i}].shift must be an integer`);
            }
            const start = cursors.resolve(rec, cur.partition, cur.offset);
            const target = start + shift;
            if (target < -1)
                throw problems.invalidCursor(`[${i}]: shifting ${cur.offset} by ${shift} goes before the first offset`);
            // Past 2^53 the sum is no longer exact (and no partition holds that many events): not yet existing.
            if (!Number.isSafeInteger(target))
                throw problems.invalidCursor(`[${i}]: shifting ${cur.offset} by ${shift} goes past the newest offset`);
            cursors.checkInRange(rec, cur.partition, toOffset(target), `${cur.offset} shifted by ${shift}`);
            return { partition: cur.partition, offset: cursors.formatCursor(rec, cur.partition, toOffset(target)) };
        });
    });
};
//# sourceMappingURL=partitions.js.map