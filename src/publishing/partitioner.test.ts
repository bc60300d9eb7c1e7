// Goal: partition selection follows compatibility.md (Java String.hashCode sum, abs, modulo, ids
// sorted as strings) and is stable; user_defined requires an existing partition.
// Method: known Java hash values, fast-check stability and range properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hashPartitionIndex, javaStringHashCode, makePartitioner, PartitioningError } from './partitioner.js';
import type { EventType } from '../metadata/types.js';

const rnd = { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => 'x' };

function et(over: Partial<EventType>): EventType {
  return {
    name: 't', owning_application: 'a', category: 'business', enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'random', compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: '' },
    options: { retention_time: 1 }, created_at: '', updated_at: '', ...over,
  };
}

test('Java String.hashCode matches known values', () => {
  assert.equal(javaStringHashCode(''), 0);
  assert.equal(javaStringHashCode('hello'), 99162322);
  assert.equal(javaStringHashCode('polygenelubricants'), -2147483648);
  assert.equal(javaStringHashCode('Aa'), javaStringHashCode('BB'));
});

test('hash index is abs(sum) modulo count, also at Integer.MIN_VALUE', () => {
  assert.equal(hashPartitionIndex(['hello'], 8), 99162322 % 8);
  assert.equal(hashPartitionIndex(['polygenelubricants'], 3), 2147483648 % 3);
});

test('hash indexes partition ids sorted as strings', () => {
  const ids = Array.from({ length: 12 }, (_, i) => String(i));
  const p = makePartitioner(et({ partition_strategy: 'hash', partition_key_fields: ['k'] }), ids, rnd);
  const sorted = [...ids].sort();
  assert.equal(p.partitionOf({ k: 'hello' }), sorted[99162322 % 12]);
});

test('hash is stable and in range for any key', () => {
  const ids = ['0', '1', '2', '3', '4'];
  const p = makePartitioner(et({ partition_strategy: 'hash', partition_key_fields: ['a', 'b.c'] }), ids, rnd);
  fc.assert(
    fc.property(fc.string(), fc.oneof(fc.string(), fc.integer()), (a, c) => {
      const ev = { a, b: { c } };
      const first = p.partitionOf(ev);
      assert.ok(ids.includes(first));
      assert.equal(p.partitionOf(structuredClone(ev)), first);
    }),
  );
});

test('hash key fields of category data are relative to data', () => {
  const p = makePartitioner(et({ category: 'data', partition_strategy: 'hash', partition_key_fields: ['id'] }), ['0', '1', '2'], rnd);
  const direct = makePartitioner(et({ partition_strategy: 'hash', partition_key_fields: ['id'] }), ['0', '1', '2'], rnd);
  assert.equal(p.partitionOf({ data: { id: 'x42' } }), direct.partitionOf({ id: 'x42' }));
  assert.throws(() => p.partitionOf({ id: 'x42' }), PartitioningError);
});

test('user_defined requires metadata.partition naming an existing partition', () => {
  const p = makePartitioner(et({ partition_strategy: 'user_defined' }), ['0', '1'], rnd);
  assert.equal(p.partitionOf({ metadata: { partition: '1' } }), '1');
  assert.throws(() => p.partitionOf({ metadata: {} }), /required/);
  assert.throws(() => p.partitionOf({ metadata: { partition: '7' } }), /does not exist/);
  assert.throws(() => p.partitionOf({ metadata: { partition: 1 } }), /does not exist/);
});

test('random spreads over all partitions using the injected randomness', () => {
  let i = 0;
  const seq = { next: () => 0, int: (n: number) => i++ % n, uuid: () => '' };
  const p = makePartitioner(et({}), ['0', '1', '2'], seq);
  assert.deepEqual([0, 1, 2, 3].map(() => p.partitionOf({})), ['0', '1', '2', '0']);
});

test('hash over several fields: the sum of their hashes, every field checked before any is hashed', () => {
  const ids = ['0', '1', '2', '3', '4', '5', '6'];
  const fields = ['a', 'b.c', 'd'];
  const p = makePartitioner(et({ partition_strategy: 'hash', partition_key_fields: fields }), ids, rnd);
  fc.assert(
    fc.property(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean()), fc.jsonValue(), (a, c, d) => {
      assert.equal(p.partitionOf({ a, b: { c }, d }), [...ids].sort()[hashPartitionIndex([a, c, d], ids.length)]);
    }),
  );
  assert.throws(() => p.partitionOf({ a: 'x', b: {}, d: 1 }), /"b.c" is missing/);
  const strict = makePartitioner(et({ partition_strategy: 'hash', partition_key_fields: fields }), ids, rnd, true);
  assert.throws(() => strict.partitionOf({ a: { o: 1 }, b: {}, d: 1 }), /"a" must be a string/);
  assert.throws(() => strict.partitionOf({ a: 'x', b: { c: 1 } }), /"d" is missing/);
});
