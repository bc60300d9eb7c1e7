import assert from 'node:assert/strict';
import test from 'node:test';
import { entryOverheadBytes as o, MemoryStorage } from './storage.js';
import type { Entry } from './types.js';

const entry = (index: number, bytes: number, term = 1): Entry => ({ index, term, type: 'normal', data: new Uint8Array(bytes) });
/** The bytes the storage holds for its entries (data and the objects around it), counted from its entries. */
const counted = (s: MemoryStorage) => s.entries(s.firstIndex(), s.lastIndex() + 1, Number.MAX_SAFE_INTEGER).reduce((n, e) => n + e.data.byteLength + o, 0);

test('MemoryStorage counts the bytes of the entries it holds through appends, overwrites, compactions and snapshots', () => {
  const s = new MemoryStorage();
  assert.equal(s.bytes(), 0);
  s.append([entry(1, 100), entry(2, 200), entry(3, 300)]);
  assert.equal(s.bytes(), 600 + 3 * o);
  // A conflicting append replaces the stored suffix: the replaced entries' bytes go.
  s.append([entry(2, 50, 2), entry(3, 60, 2), entry(4, 70, 2)]);
  assert.equal(s.bytes(), 100 + 50 + 60 + 70 + 4 * o);
  assert.equal(s.bytes(), counted(s));
  s.createSnapshot(2, { voters: [1], learners: [] }, new Uint8Array(0));
  s.compact(2);
  assert.equal(s.bytes(), 60 + 70 + 2 * o);
  assert.equal(s.bytes(), counted(s));
  // Entries already covered by the snapshot are skipped, and count nothing.
  s.append([entry(2, 999, 2), entry(3, 60, 2), entry(4, 70, 2), entry(5, 80, 2)]);
  assert.equal(s.bytes(), 60 + 70 + 80 + 3 * o);
  assert.equal(s.bytes(), counted(s));
  s.applySnapshot({ metadata: { index: 10, term: 3, confState: { voters: [1], learners: [] } }, data: new Uint8Array(5) });
  assert.equal(s.bytes(), 0);
});

test('compactIndexKeeping drops the oldest entries until the rest fits the bound, never beyond the limit given', () => {
  const s = new MemoryStorage();
  const each = 100 + o;
  s.append(Array.from({ length: 10 }, (_, k) => entry(k + 1, 100)));
  assert.equal(s.compactIndexKeeping(10 * each, 10), 0, 'within the bound: nothing to drop');
  assert.equal(s.compactIndexKeeping(10 * each - 1, 10), 1);
  assert.equal(s.compactIndexKeeping(3.5 * each, 10), 7, 'three entries fit three and a half');
  assert.equal(s.compactIndexKeeping(0, 10), 10);
  assert.equal(s.compactIndexKeeping(0, 4), 4, 'entries past the limit (not applied) stay whatever the bound');
  s.createSnapshot(7, { voters: [1], learners: [] }, new Uint8Array(0));
  s.compact(s.compactIndexKeeping(3.5 * each, 10));
  assert.equal(s.bytes(), 3 * each);
  assert.equal(s.firstIndex(), 8);
  assert.equal(s.compactIndexKeeping(each, 10), 9);
});

test('many small entries count more than their data: the objects around each are held too', () => {
  const s = new MemoryStorage();
  s.append(Array.from({ length: 1000 }, (_, k) => entry(k + 1, 10)));
  assert.ok(s.bytes() >= 1000 * (10 + 200), `${s.bytes()} bytes for 1000 entries of 10 bytes`);
});
