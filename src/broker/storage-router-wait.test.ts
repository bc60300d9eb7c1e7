// Goal: a reader's wait (StorageRouter.waitForEvents) resolves only when its next read has events to
// answer. On a node whose replica of an old timeline still lacks that timeline's last events while the
// new timeline already has some, read() answers nothing; a wait that resolved at once there made the
// read-and-wait loop of a stream (or the multi-node test's follower) spin on microtasks for good,
// starving the replication it waited for (the multi-node timeline test hung and ran out of memory).
// Method: the router over a fake store whose logs are set by hand (two timelines of one partition).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toOffset, type Offset } from '../core/offset.js';
import type { PartitionBounds, StoredEvent } from '../consumption/ports.js';
import type { EventTypeRecord, TimelineRecord } from '../metadata/types.js';
import type { PartitionAppend, PartitionAppendResult } from '../publishing/ports.js';
import { StorageRouter, type PartitionLogs } from './storage-router.js';

/** Partition 0 of each topic: offsets from `oldest` to `newest`; waiters woken when `newest` grows. */
class FakeLogs implements PartitionLogs {
  readonly logs = new Map<number, { oldest: number; newest: number }>();
  readonly #waiters = new Set<() => void>();

  put(topic: number, oldest: number, newest: number): void {
    this.logs.set(topic, { oldest, newest });
    for (const w of [...this.#waiters]) w();
  }
  bounds(topic: number): PartitionBounds {
    const l = this.logs.get(topic) ?? { oldest: 0, newest: -1 };
    return { oldest: toOffset(l.oldest), newest: toOffset(l.newest) };
  }
  async read(topic: number, _p: number, after: Offset, maxEvents: number): Promise<StoredEvent[]> {
    const l = this.logs.get(topic) ?? { oldest: 0, newest: -1 };
    const out: StoredEvent[] = [];
    for (let o = Math.max(after + 1, l.oldest); o <= l.newest && out.length < maxEvents; o++) out.push({ offset: toOffset(o), bytes: Buffer.from(`e${o}`) });
    return out;
  }
  waitForEvents(topic: number, _p: number, after: Offset, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!signal.aborted && this.bounds(topic).newest <= after) return;
        this.#waiters.delete(check);
        resolve();
      };
      this.#waiters.add(check);
      signal.addEventListener('abort', check, { once: true });
      check();
    });
  }
  async append(_items: PartitionAppend[]): Promise<PartitionAppendResult[]> {
    throw new Error('not used');
  }
  async setBase(): Promise<void> {}
  async control(): Promise<number> {
    throw new Error('not used');
  }
  async applyRetention(): Promise<number> {
    return 0;
  }
  async dropTopic(): Promise<void> {}
  topics(): number[] {
    return [...this.logs.keys()];
  }
}

/** Event type "orders" (logical topic 1): timeline a (topic 1) from 0, timeline b (topic 2) from 5. */
function setup() {
  const store = new FakeLogs();
  const timelines = [
    { id: 'a', topic: 1, storage_id: 'default', starts: [0] },
    { id: 'b', topic: 2, storage_id: 'default', starts: [5] },
  ] as unknown as TimelineRecord[];
  const rec = { storage: { topic: 1, timelines } } as unknown as EventTypeRecord;
  const router = new StorageRouter(store, (topic) => (topic === 1 ? rec : undefined), async () => {
    throw new Error('no other storage');
  });
  return { store, router };
}

/** What a wait does within `ms`: 'woke' or 'waiting'. */
async function within(wait: Promise<void>, ms: number): Promise<'woke' | 'waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([wait.then(() => 'woke' as const), new Promise<'waiting'>((res) => (timer = setTimeout(() => res('waiting'), ms)))]);
  clearTimeout(timer);
  return r;
}

test('a reader behind on the old timeline waits for that log, not for the newest of all timelines', async () => {
  const { store, router } = setup();
  // This node's replica of timeline a holds 0..2 of its 0..4 (it lags); timeline b holds 5..7 already.
  store.put(1, 0, 2);
  store.put(2, 5, 7);
  assert.equal(router.bounds(1, 0).newest, 7);
  assert.deepEqual(await router.read(1, 0, toOffset(2), 10, 1 << 20), [], 'offset 3 is not here yet');
  const ac = new AbortController();
  const wait = router.waitForEvents(1, 0, toOffset(2), ac.signal);
  assert.equal(await within(wait, 50), 'waiting', 'no wake-up while read() has nothing to answer (a reader loop would spin)');
  store.put(1, 0, 4);
  assert.equal(await within(wait, 1000), 'woke', 'woken when the old log catches up');
  assert.deepEqual((await router.read(1, 0, toOffset(2), 10, 1 << 20)).map((e) => e.offset), [3, 4]);
  // At the old timeline's last offset the reader continues on the new one, which has events.
  assert.equal(await within(router.waitForEvents(1, 0, toOffset(4), ac.signal), 50), 'woke');
  assert.deepEqual((await router.read(1, 0, toOffset(4), 10, 1 << 20)).map((e) => e.offset), [5, 6, 7]);
  ac.abort();
});

test('a read-and-wait loop over a lagging old timeline yields to the event loop', async () => {
  const { store, router } = setup();
  store.put(1, 0, 2);
  store.put(2, 5, 7);
  // The old log catches up on a timer: a loop that never yields never sees it, and the timer shows it.
  setTimeout(() => store.put(1, 0, 4), 20);
  const signal = AbortSignal.timeout(2000);
  let after = 2;
  let rounds = 0;
  while (after < 7) {
    assert.ok(++rounds < 1000, `the reader went round ${rounds} times without the old log catching up: it spins`);
    const got = await router.read(1, 0, toOffset(after), 10, 1 << 20);
    if (got.length > 0) after = got.at(-1)!.offset;
    else await router.waitForEvents(1, 0, toOffset(after), signal);
  }
  assert.ok(!signal.aborted, 'read to the end before the signal ran out');
});
