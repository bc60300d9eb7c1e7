/**
 * The memory tail in the node's slabs against MemoryStorage as the model: several tails share a few
 * small slabs (so slabs fill, are reused in any order and refuse), under appends that overwrite a
 * suffix, compactions, snapshot installs and releases; every read, term and byte count must be the
 * model's, and no live entry's bytes may change under another's writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryStorage } from '../raft/index.js';
import type { Entry } from '../raft/index.js';
import { ByteSlabs } from './byte-slabs.js';
import { RingStorage } from './ring-storage.js';
import { ReplicasContext } from './partition-replicas-context.js';
import type { PartitionReplicasOptions } from './partition-replicas-types.js';
import { encodeBatchEntry, isChecked } from '../log/partition-entry.js';

type Op =
  | { k: 'append'; s: number; back: number; under: number; n: number; term: number; size: number }
  | { k: 'compact'; s: number; at: number }
  | { k: 'install'; s: number; ahead: number }
  | { k: 'release'; s: number }
  | { k: 'read'; s: number; lo: number; len: number; max: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant('append' as const), s: fc.nat(2), back: fc.nat(6), under: fc.nat(3), n: fc.integer({ min: 1, max: 6 }), term: fc.nat(2), size: fc.nat(700) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('compact' as const), s: fc.nat(2), at: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('install' as const), s: fc.nat(2), ahead: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('release' as const), s: fc.nat(2) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('read' as const), s: fc.nat(2), lo: fc.nat(20), len: fc.nat(8), max: fc.nat(3000) }) },
);

const conf = { voters: [1], learners: [] };

/** Bytes that say which entry they belong to (index, term, a counter), so a mix-up shows. */
function dataOf(index: number, term: number, size: number, serial: number): Uint8Array {
  const d = Buffer.alloc(size);
  for (let i = 0; i < size; i++) d[i] = (index * 31 + term * 7 + serial * 13 + i) & 0xff;
  return d;
}

function same(a: readonly Entry[], b: readonly Entry[], what: string): void {
  assert.equal(a.length, b.length, `${what}: count`);
  for (let i = 0; i < a.length; i++) {
    assert.equal(a[i]!.index, b[i]!.index, `${what}: index`);
    assert.equal(a[i]!.term, b[i]!.term, `${what}: term`);
    assert.equal(a[i]!.type, b[i]!.type, `${what}: type`);
    assert.deepEqual(Buffer.from(a[i]!.data), Buffer.from(b[i]!.data), `${what}: data of ${a[i]!.index}`);
  }
}

function check(ring: RingStorage, model: MemoryStorage, what: string): void {
  assert.equal(ring.firstIndex(), model.firstIndex(), `${what}: firstIndex`);
  assert.equal(ring.lastIndex(), model.lastIndex(), `${what}: lastIndex`);
  assert.equal(ring.bytes(), model.bytes(), `${what}: bytes`);
  for (let i = model.firstIndex() - 1; i <= model.lastIndex(); i++) assert.equal(ring.term(i), model.term(i), `${what}: term ${i}`);
  if (model.lastIndex() >= model.firstIndex()) same(ring.entries(ring.firstIndex(), ring.lastIndex() + 1, Number.MAX_SAFE_INTEGER), model.entries(model.firstIndex(), model.lastIndex() + 1, Number.MAX_SAFE_INTEGER), what);
  assert.deepEqual(ring.snapshot().metadata, model.snapshot().metadata, `${what}: snapshot`);
}

test('the memory tail in slabs reads as MemoryStorage does, across shared slabs that fill, wrap and refuse', () => {
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 4 }), fc.boolean(), (ops, slabCount, reserved) => {
      // Slabs of 1 KiB: entries of up to 700 bytes, so slabs fill after one or two entries and wrap often.
      const slabs = new ByteSlabs(slabCount * 1024, 1024);
      // A node reserves its slabs when it starts (uninitialised memory): reads must not depend on it.
      if (reserved) slabs.reserve();
      const pairs = [0, 1, 2].map(() => ({ ring: new RingStorage(slabs), model: new MemoryStorage() }));
      let serial = 0;
      for (const o of ops) {
        const p = pairs[o.s]!;
        const { ring, model } = p;
        const what = JSON.stringify(o);
        if (o.k === 'append') {
          // `under`: the append starts before the snapshot (its first entries are covered by it already).
          const start = Math.max(1, Math.max(model.firstIndex(), model.lastIndex() + 1 - o.back) - o.under);
          const base = Math.max(model.lastIndex() > 0 ? model.term(model.lastIndex()) : 0, model.snapshot().metadata.term);
          const ents: Entry[] = [];
          for (let i = 0; i < o.n; i++) {
            const index = start + i;
            const term = base + o.term;
            ents.push({ index, term, type: o.size % 5 === 0 ? 'confChange' : 'normal', data: o.size % 7 === 0 ? new Uint8Array(0) : dataOf(index, term, o.size, serial++) });
          }
          ring.append(ents);
          model.append(ents);
        } else if (o.k === 'compact') {
          const at = model.firstIndex() - 1 + (o.at % (model.lastIndex() - model.firstIndex() + 2));
          if (at >= model.firstIndex()) {
            ring.createSnapshot(at, conf, new Uint8Array(0));
            model.createSnapshot(at, conf, new Uint8Array(0));
            ring.compact(at);
            model.compact(at);
          }
        } else if (o.k === 'install') {
          const snap = { metadata: { index: model.lastIndex() + o.ahead, term: model.snapshot().metadata.term + 1, confState: conf }, data: new Uint8Array(0) };
          ring.applySnapshot(snap);
          model.applySnapshot(snap);
        } else if (o.k === 'release') {
          ring.release();
        } else {
          const first = model.firstIndex();
          const last = model.lastIndex();
          if (last >= first) {
            const lo = first + (o.lo % (last - first + 1));
            const hi = Math.min(last + 1, lo + o.len);
            same(ring.entries(lo, hi, o.max), model.entries(lo, hi, o.max), what);
            assert.equal(ring.compactIndexKeeping(o.max, lo), model.compactIndexKeeping(o.max, lo), `${what}: compactIndexKeeping`);
          }
        }
        // Every tail, not only the one touched: another's writes must not have reached its bytes.
        for (const [n, q] of pairs.entries()) check(q.ring, q.model, `${what}, tail ${n}`);
        // The slabs hold no more than the tails' entries (released tails: what they took in since).
        assert.ok(slabs.liveBytes() <= pairs.reduce((t, q) => t + q.model.bytes(), 0), 'slabs hold no more than the tails');
      }
      // Everything released or compacted away leaves the slabs empty.
      for (const p of pairs) {
        if (p.model.lastIndex() >= p.model.firstIndex()) {
          p.ring.createSnapshot(p.model.lastIndex(), conf, new Uint8Array(0));
          p.ring.compact(p.model.lastIndex());
        }
      }
      assert.equal(slabs.liveBytes(), 0, 'slabs empty once every tail is compacted');
    }),
    { numRuns: 400 },
  );
});

test('slabs: reserve allocates every slab up front, once; a node reserves its own when it starts', () => {
  const slabs = new ByteSlabs(4096, 1024);
  assert.equal(slabs.slabsAllocated(), 0, 'allocated on first use unless reserved');
  slabs.reserve();
  assert.equal(slabs.slabsAllocated(), 4);
  const h = slabs.alloc(600);
  slabs.write(h, Buffer.alloc(600, 7));
  slabs.reserve(); // a second reserve allocates nothing new: what is written stays
  assert.deepEqual(slabs.copy(h, 600), Buffer.alloc(600, 7));
  const ctx = new ReplicasContext({ tailSlabs: { totalBytes: 8192, slabBytes: 2048 } } as unknown as PartitionReplicasOptions);
  assert.equal(ctx.slabs.slabsAllocated(), 4, 'the node allocated its slabs before any load');
});

test('slabs: a freed slab is reused, a full set refuses, and what is refused is counted', () => {
  const slabs = new ByteSlabs(2048, 1024);
  const a = slabs.alloc(600);
  const b = slabs.alloc(600); // does not fit after a: the second slab
  assert.equal(Math.floor(a / 1024), 0);
  assert.equal(Math.floor(b / 1024), 1);
  assert.equal(slabs.alloc(600), -1, 'both slabs partly live: no room');
  assert.equal(slabs.refused, 1);
  slabs.free(a, 600);
  const c = slabs.alloc(600);
  assert.equal(Math.floor(c / 1024), 0, 'the emptied slab is reused');
  assert.equal(slabs.alloc(2000), -1, 'larger than a slab');
  assert.equal(slabs.liveBytes(), 1200);
});

test('a copy of an entry checked or encoded here counts as checked; its bytes are its own', () => {
  const slabs = new ByteSlabs(4096, 1024);
  const ring = new RingStorage(slabs);
  const data = Buffer.from('abcdef');
  const first: Entry = { index: 1, term: 1, type: 'normal', data };
  ring.append([first]);
  assert.equal(ring.entries(1, 2, 100)[0], first, 'the last append is read as it came (apply, right after)');
  ring.append([{ index: 2, term: 1, type: 'normal', data: Buffer.from('gh') }]);
  const [e] = ring.entries(1, 2, 100);
  assert.notEqual(e!.data, data, 'an older entry is a copy');
  assert.equal(isChecked(e!.data), false, 'not checked before: not checked after');
  // A later tail reusing the slab does not change the copy handed out.
  ring.createSnapshot(2, conf, new Uint8Array(0));
  ring.compact(2);
  const other = new RingStorage(slabs);
  other.append([{ index: 1, term: 1, type: 'normal', data: Buffer.from('zzzzzz') }]);
  assert.equal(Buffer.from(e!.data).toString(), 'abcdef');
});

test('apply does not check an entry encoded here again after it went through the slabs', () => {
  const ring = new RingStorage(new ByteSlabs(4096, 1024));
  const data = encodeBatchEntry(1, 'r', [Buffer.from('{"a":1}')]);
  assert.equal(isChecked(data), true);
  ring.append([{ index: 1, term: 1, type: 'normal', data }]);
  ring.append([{ index: 2, term: 1, type: 'normal', data: Buffer.from('x') }]);
  const [e] = ring.entries(1, 2, 100);
  assert.notEqual(e!.data, data);
  assert.equal(isChecked(e!.data), true);
  ring.release();
  assert.equal(isChecked(ring.entries(1, 2, 100)[0]!.data), true, 'after release too');
});
