// Goal: the typed-array de-duplication window answers exactly as the Map it replaced (insertion order
// is eviction order, a full window evicts its oldest id, `put` of a held id keeps its place), through
// growth of its slots and of its code-unit ring, wrap-around of both, and hash collisions.
// Method: fast-check runs random operation sequences against a Map model, with ids of mixed lengths and
// characters (astral, lone surrogates, empty) drawn from a small pool so that lookups hit and miss;
// a tiny capacity and a large one; examples for collisions and for an id longer than the ring.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RequestWindow } from './request-window.js';

class MapWindow {
  readonly map = new Map<string, [number, number]>();
  constructor(readonly capacity: number) {}
  add(id: string, first: number, last: number): void {
    this.map.set(id, [first, last]);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }
  put(id: string, first: number, last: number): void {
    if (this.map.has(id)) this.map.set(id, [first, last]);
    else this.add(id, first, last);
  }
  entries(): [string, number, number][] {
    return [...this.map].map(([id, [f, l]]) => [id, f, l]);
  }
}

function same(w: RequestWindow, m: MapWindow, probes: readonly string[]): void {
  assert.equal(w.size, m.map.size);
  assert.deepEqual(w.entries(), m.entries());
  for (const id of probes) {
    const s = w.find(id);
    const want = m.map.get(id);
    if (want === undefined) assert.equal(s, -1, `found ${JSON.stringify(id)}`);
    else {
      assert.ok(s >= 0, `lost ${JSON.stringify(id)}`);
      assert.deepEqual([w.firstAt(s), w.lastAt(s)], want);
    }
  }
}

const idArb = fc.oneof(
  fc.uuid().map((u) => `${u}.${u.length % 7}`),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', '\ud800', 'a\udc00b', 'x'.repeat(130)),
);

test('property: the window answers as the Map it replaced, whatever the operations', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(1, 2, 3, 7, 16, 17, 40, 512),
      fc.array(idArb, { minLength: 1, maxLength: 60 }),
      fc.array(fc.tuple(fc.constantFrom('add', 'put', 'find'), fc.nat(), fc.nat(1_000_000)), { maxLength: 700 }),
      (capacity, pool, ops) => {
        const w = new RequestWindow(capacity);
        const m = new MapWindow(capacity);
        for (const [op, pick, n] of ops) {
          const id = pool[pick % pool.length]!;
          if (op === 'find') {
            const s = w.find(id);
            assert.equal(s >= 0, m.map.has(id));
          } else if (op === 'put') {
            w.put(id, n, n + 1);
            m.put(id, n, n + 1);
          } else if (!m.map.has(id)) {
            // add is for ids not held (PartitionState looks them up first)
            w.add(id, n, n + 2);
            m.add(id, n, n + 2);
          }
        }
        same(w, m, pool);
      },
    ),
    { numRuns: 400, seed: 9 },
  );
});

test('long runs: every id of a full window found, evicted ones not, after many wraps of the rings', () => {
  const w = new RequestWindow(512);
  const m = new MapWindow(512);
  for (let i = 0; i < 20_000; i++) {
    // lengths vary so the code-unit ring wraps at every position
    const id = `req-${i}`.padEnd(8 + (i % 37), '.');
    w.add(id, i * 10, i * 10 + 9);
    m.add(id, i * 10, i * 10 + 9);
    if (i % 997 === 0) same(w, m, [id, `req-${i - 512}`.padEnd(8 + ((i - 512) % 37), '.'), `req-${i - 511}`.padEnd(8 + ((i + 37 * 20 - 511) % 37), '.')]);
  }
  same(w, m, m.entries().map(([id]) => id));
  assert.equal(w.size, 512);
});

test('ids whose hashes collide are told apart, and deleting one keeps the others reachable', () => {
  // FNV-1a of "costarring" and "liquid" collide (a known 32-bit pair); with a small table many more
  // share a home position, which the property above exercises as well.
  const w = new RequestWindow(3);
  w.add('costarring', 1, 1);
  w.add('liquid', 2, 2);
  w.add('declinate', 3, 3);
  assert.deepEqual([w.firstAt(w.find('costarring')), w.firstAt(w.find('liquid'))], [1, 2]);
  w.add('macallums', 4, 4); // evicts costarring
  assert.equal(w.find('costarring'), -1);
  assert.equal(w.firstAt(w.find('liquid')), 2);
  assert.equal(w.firstAt(w.find('macallums')), 4);
  assert.deepEqual(w.entries().map(([id]) => id), ['liquid', 'declinate', 'macallums']);
});

test('a capacity below one is refused', () => {
  assert.throws(() => new RequestWindow(0), RangeError);
});
