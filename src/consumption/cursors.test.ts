import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import type { Offset } from '../core/offset.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
import { CursorResolver } from './cursors.js';
import type { PartitionReader } from './ports.js';
import type { EventTypeRecord } from '../metadata/types.js';

const stops: (() => void)[] = [];

/** A replica that applies one more event every 10 ms up to `upTo`. */
function laggingReader(startNewest: number, upTo: number): PartitionReader {
  let newest = startNewest;
  const waiters = new Set<() => void>();
  const timer = setInterval(() => {
    if (newest < upTo) newest++;
    for (const w of waiters) w();
  }, 10);
  stops.push(() => clearInterval(timer));
  return {
    bounds: () => ({ oldest: 0 as Offset, newest: newest as Offset }),
    read: async () => [],
    waitForEvents: (_t, _p, after, signal) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (newest > after || signal.aborted) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        signal.addEventListener('abort', check, { once: true });
      }),
  };
}

const cursor = (n: number) => `001-0001-${String(n).padStart(18, '0')}`;

test('a cursor ahead of this node\'s copy waits for the copy to reach it, and is refused (422) only when it does not in time', async () => {
  const rec: EventTypeRecord = { eventType: storedEventType('orders'), schemas: [], storage: { topic: 1, partitions: ['0'], timeline: 1 } };
  const catchingUp = new CursorResolver(laggingReader(10, 20));
  assert.equal(await catchingUp.resolveCatchingUp(rec, '0', cursor(15), 2000), 15);
  const stuck = new CursorResolver(laggingReader(10, 12));
  await assert.rejects(stuck.resolveCatchingUp(rec, '0', cursor(15), 200), (e) => isProblem(e) && e.status === 422 && /does not exist yet/.test(e.detail ?? ''));
  // Without a wait (a single node), the answer is immediate, as resolve() gives it.
  await assert.rejects(new CursorResolver(laggingReader(10, 20)).resolveCatchingUp(rec, '0', cursor(15), 0), (e) => isProblem(e) && e.status === 422);
  for (const stop of stops) stop();
});

test('a cursor still ahead of this node\'s copy after the wait: 503 (retry) when another replica holds it or none answers, 422 only when the others do not know it either', async () => {
  const rec: EventTypeRecord = { eventType: storedEventType('orders'), schemas: [], storage: { topic: 1, partitions: ['0'], timeline: 1 } };
  const behind = (elsewhere: { asked: number; newest: number | undefined }): PartitionReader => ({ ...laggingReader(10, 10), newestElsewhere: async () => elsewhere });
  const retry = (e: unknown) => isProblem(e) && e.status === 503 && /ahead of this node's copy/.test(e.detail ?? '') && /Retry/.test(e.detail ?? '');
  await assert.rejects(new CursorResolver(behind({ asked: 2, newest: 40 })).resolveCatchingUp(rec, '0', cursor(15), 50), (e) => retry(e) && /another replica holds it/.test((e as { detail?: string }).detail ?? ''));
  await assert.rejects(new CursorResolver(behind({ asked: 2, newest: undefined })).resolveCatchingUp(rec, '0', cursor(15), 50), (e) => retry(e) && /no other replica/.test((e as { detail?: string }).detail ?? ''));
  await assert.rejects(new CursorResolver(behind({ asked: 2, newest: 12 })).resolveCatchingUp(rec, '0', cursor(15), 50), (e) => isProblem(e) && e.status === 422 && /does not exist yet/.test(e.detail ?? ''));
  // The only replica (nothing else to ask): invalid, as before.
  await assert.rejects(new CursorResolver(behind({ asked: 0, newest: undefined })).resolveCatchingUp(rec, '0', cursor(15), 50), (e) => isProblem(e) && e.status === 422);
  for (const stop of stops) stop();
});
