/**
 * Partitions and the cursor tools (interface.md, "Partitions and cursors (unmanaged)"). All cursor
 * errors (unknown partition, malformed, expired or not-yet-existing offsets) are 422.
 */
import type { FastifyPluginAsync } from 'fastify';
import { problems } from '../../core/problem.js';
import { cursorShapeError, type WireCursor } from '../../consumption/cursors.js';
import { cursorDistance, cursorLag, shiftCursor } from '../../consumption/cursor-tools.js';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';

type NameParams = { name: string };

function bodyArray(body: unknown, what: string): unknown[] {
  const parsed = parseJsonBody(body);
  if (!Array.isArray(parsed)) throw problems.unprocessable(`The body must be a JSON array of ${what}`);
  return parsed;
}

function asCursor(c: unknown, where: string): WireCursor {
  const err = cursorShapeError(c, where);
  if (err !== null) throw problems.unprocessable(err);
  return c as WireCursor;
}

/**
 * The partitions the cursors under `keys` of `o` name (unchecked: the answer's checks refuse bad ones),
 * whose bounds are freshened before the answer (consumption/cursors.ts, freshen).
 */
function partitionsNamed(o: unknown, ...keys: string[]): string[] {
  if (o === null || typeof o !== 'object') return [];
  return keys.map((k) => (o as Record<string, { partition?: unknown } | null | undefined>)[k]?.partition).filter((p): p is string => typeof p === 'string');
}

export const partitionRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { cursors } = deps;

  app.get<{ Params: NameParams; Querystring: { cursors?: string } }>('/event-types/:name/partitions', async (request) => {
    const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkRead(request.principal, rec.eventType);
    await cursors.freshen(rec, rec.storage.partitions);
    const consumed = new Map<string, ReturnType<typeof cursors.resolve>>();
    if (request.query.cursors !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(request.query.cursors);
      } catch {
        throw problems.badRequest('Query parameter cursors must be a URL-encoded JSON array of cursors');
      }
      if (!Array.isArray(parsed)) throw problems.badRequest('Query parameter cursors must be a JSON array of cursors');
      parsed.forEach((c, i) => {
        const cur = asCursor(c, `cursors[${i}]`);
        consumed.set(cur.partition, cursors.resolve(rec, cur.partition, cur.offset));
      });
    }
    return rec.storage.partitions.map((p) => cursors.partitionView(rec, p, consumed.get(p)));
  });

  app.get<{ Params: NameParams & { partition: string }; Querystring: { consumed_offset?: string } }>(
    '/event-types/:name/partitions/:partition',
    async (request) => {
      const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkRead(request.principal, rec.eventType);
      const { partition } = request.params;
      if (!rec.storage.partitions.includes(partition)) {
        throw problems.notFound(`Partition "${partition}" does not exist in event type "${rec.eventType.name}"`);
      }
      const consumed = request.query.consumed_offset;
      await cursors.freshen(rec, [partition]);
      return cursors.partitionView(rec, partition, consumed === undefined ? undefined : cursors.resolve(rec, partition, consumed));
    },
  );

  app.post<{ Params: NameParams }>('/event-types/:name/cursor-distances', async (request) => {
    const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkRead(request.principal, rec.eventType);
    const queries = bodyArray(request.body, 'cursor distance queries');
    await cursors.freshen(rec, queries.flatMap((q) => partitionsNamed(q, 'initial_cursor', 'final_cursor')));
    return queries.map((q, i) => {
      if (q === null || typeof q !== 'object') throw problems.unprocessable(`Item ${i} must be an object with initial_cursor and final_cursor`);
      const o = q as Record<string, unknown>;
      const initial = asCursor(o['initial_cursor'], `[${i}].initial_cursor`);
      const final = asCursor(o['final_cursor'], `[${i}].final_cursor`);
      return { initial_cursor: initial, final_cursor: final, distance: cursorDistance(cursors, rec, initial, final, `[${i}]`) };
    });
  });

  app.post<{ Params: NameParams }>('/event-types/:name/cursors-lag', async (request) => {
    const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkRead(request.principal, rec.eventType);
    const list = bodyArray(request.body, 'cursors');
    await cursors.freshen(rec, list.flatMap((c) => partitionsNamed({ c }, 'c')));
    return list.map((c, i) => cursorLag(cursors, rec, asCursor(c, `[${i}]`)));
  });

  app.post<{ Params: NameParams }>('/event-types/:name/shifted-cursors', async (request) => {
    const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkRead(request.principal, rec.eventType);
    const list = bodyArray(request.body, 'shifted cursors');
    await cursors.freshen(rec, list.flatMap((c) => partitionsNamed({ c }, 'c')));
    return list.map((c, i) => {
      const cur = asCursor(c, `[${i}]`);
      const shift = (c as Record<string, unknown>)['shift'];
      if (typeof shift !== 'number' || !Number.isSafeInteger(shift)) {
        throw problems.unprocessable(`[${i}].shift must be an integer`);
      }
      return shiftCursor(cursors, rec, cur, shift, `[${i}]`);
    });
  });
};
