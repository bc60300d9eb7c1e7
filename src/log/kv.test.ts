/**
 * Goal: MemoryKv and the RocksDB adapter behave the same through the OrderedKv port (ordering, ranges,
 * atomic batches, call order), MemoryKv's crash drops exactly the non-durable writes, and the RocksDB
 * adapter groups concurrent durable writes into few fsyncs and survives WAL switches.
 * Method: one conformance suite run against both implementations; RocksDB-specific tests count native
 * commits and WAL fdatasyncs in the adapter's stats, force WAL switches with a tiny memtable, and
 * reopen the database to check what persisted.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from './memory-kv.js';
import { openRocksKv } from './rocks-kv.js';
import { type OrderedKv, type KvRange } from './kv.js';
import { tempDir } from './test-support.js';

const k = (...bytes: number[]): Buffer => Buffer.from(bytes);
const v = (s: string): Buffer => Buffer.from(s);

async function all(kv: OrderedKv, r: KvRange): Promise<string[]> {
  const out: string[] = [];
  for await (const [key, value] of kv.iterate(r)) out.push(`${key.toString('hex')}=${value.toString()}`);
  return out;
}

const impls: [string, () => Promise<{ kv: OrderedKv; done: () => Promise<void> }>][] = [
  ['MemoryKv', async () => { const kv = new MemoryKv(); return { kv, done: () => kv.close() }; }],
  ['RocksKv', async () => {
    const t = await tempDir('kv');
    const kv = await openRocksKv(t.dir);
    return { kv, done: async () => { await kv.close(); await t.remove(); } };
  }],
];

for (const [name, make] of impls) {
  describe(`OrderedKv conformance: ${name}`, () => {
    test('put, get, del, delRange and ordered ranges', async () => {
      const { kv, done } = await make();
      try {
        await kv.write((b) => {
          for (const x of [5, 1, 3, 2, 4]) b.put(k(0x10, x), v(`v${x}`));
          b.put(k(0x01), v('meta'));
        }, { durable: true });
        assert.equal((await kv.get(k(0x10, 3)))?.toString(), 'v3');
        assert.equal(await kv.get(k(0x10, 9)), null);
        assert.deepEqual(await all(kv, { gte: k(0x10), lt: k(0x11) }), ['1001=v1', '1002=v2', '1003=v3', '1004=v4', '1005=v5']);
        assert.deepEqual(await all(kv, { gt: k(0x10, 2), lte: k(0x10, 4) }), ['1003=v3', '1004=v4']);
        assert.deepEqual(await all(kv, { gte: k(0x10), lt: k(0x11), reverse: true, limit: 2 }), ['1005=v5', '1004=v4']);
        await kv.write((b) => {
          b.delRange(k(0x10, 2), k(0x10, 4));
          b.del(k(0x10, 5));
        }, { durable: false });
        assert.deepEqual(await all(kv, { gte: k(0x10), lt: k(0x11) }), ['1001=v1', '1004=v4']);
        assert.equal((await kv.get(k(0x01)))?.toString(), 'meta');
      } finally {
        await done();
      }
    });

    test('writes apply in call order and a throwing fill rejects only its own write', async () => {
      const { kv, done } = await make();
      try {
        const ps = [];
        for (let i = 0; i < 50; i++) ps.push(kv.write((b) => b.put(k(0x10), v(String(i))), { durable: i % 2 === 0 }));
        const bad = kv.write(() => { throw new Error('boom'); }, { durable: true });
        ps.push(kv.write((b) => b.put(k(0x11), v('after')), { durable: true }));
        await assert.rejects(bad, /boom/);
        await Promise.all(ps);
        assert.equal((await kv.get(k(0x10)))?.toString(), '49');
        assert.equal((await kv.get(k(0x11)))?.toString(), 'after');
      } finally {
        await done();
      }
    });

    test('breaking out of an iteration releases it (close does not hang)', async () => {
      const { kv, done } = await make();
      await kv.write((b) => { for (let i = 0; i < 100; i++) b.put(k(0x10, i), v('x')); }, { durable: false });
      let n = 0;
      for await (const _ of kv.iterate({ gte: k(0x10), capacity: 10 })) if (++n === 15) break;
      assert.equal(n, 15);
      await done();
    });
  });
}

describe('MemoryKv crash', () => {
  test('keeps durable writes and everything before them, drops later non-durable ones', async () => {
    const kv = new MemoryKv();
    await kv.write((b) => b.put(k(1), v('a')), { durable: false });
    await kv.write((b) => b.put(k(2), v('b')), { durable: true });
    await kv.write((b) => b.put(k(3), v('c')), { durable: false });
    await kv.write((b) => b.delRange(k(1), k(3)), { durable: false });
    const after = kv.crash();
    assert.deepEqual(await all(after, {}), ['01=a', '02=b']);
    await assert.rejects(kv.get(k(1)));
  });

  test('failNextWrites applies nothing', async () => {
    const kv = new MemoryKv();
    kv.failNextWrites(1);
    await assert.rejects(kv.write((b) => b.put(k(1), v('a')), { durable: true }), /injected/);
    await kv.write((b) => b.put(k(2), v('b')), { durable: true });
    assert.deepEqual(await all(kv, {}), ['02=b']);
  });
});

describe('RocksKv durability', () => {
  test('group commit: concurrent durable writes share native commits and fsyncs', async () => {
    const t = await tempDir('gc');
    const kv = await openRocksKv(t.dir);
    try {
      const writers = 200;
      await Promise.all(
        Array.from({ length: writers }, (_, i) => kv.write((b) => b.put(k(0x10, i >> 8, i & 0xff), Buffer.alloc(500, i)), { durable: true })),
      );
      // Staggered arrivals while fsyncs are in flight must group as well.
      const staggered = [];
      for (let i = 0; i < 200; i++) {
        staggered.push(kv.write((b) => b.put(k(0x11, i), v('s')), { durable: true }));
        if (i % 10 === 0) await new Promise((r) => setImmediate(r));
      }
      await Promise.all(staggered);
      const s = kv.stats;
      assert.equal(s.writeCalls, 400);
      assert.ok(s.commits < 100, `expected grouping, got ${s.commits} commits for 400 writes`);
      assert.ok(s.walSyncs <= s.commits + 2, `fsyncs ${s.walSyncs} vs commits ${s.commits}`);
      assert.ok(s.walSyncs >= 1 && s.dirSyncs >= 1);
    } finally {
      await kv.close();
      await t.remove();
    }
  });

  test('a commit without a WAL switch fdatasyncs the WAL it synced last and asks RocksDB nothing', async () => {
    const t = await tempDir('noswitch');
    const kv = await openRocksKv(t.dir);
    // The adapter's private handles, to watch the requests of a commit.
    const inner = kv as unknown as { db: { currentWalFile(): Promise<unknown> }; datasync(h: unknown): Promise<void> };
    try {
      await kv.write((b) => b.put(k(0x10), v('first')), { durable: true });
      const order: string[] = [];
      const ask = inner.db.currentWalFile.bind(inner.db);
      inner.db.currentWalFile = () => {
        order.push('asked');
        return ask();
      };
      const sync = inner.datasync.bind(inner);
      inner.datasync = (h) => {
        order.push('datasync');
        return sync(h);
      };
      const questions = kv.stats.walQuestions;
      for (let i = 0; i < 20; i++) await kv.write((b) => b.put(k(0x11, i), v('second')), { durable: true });
      // A write that is not durable in between grows the WAL too: the next durable one still sees its own growth.
      await kv.write((b) => b.put(k(0x12), v('loose')), { durable: false });
      await kv.write((b) => b.put(k(0x13), v('third')), { durable: true });
      assert.deepEqual(order, Array.from({ length: 21 }, () => 'datasync'));
      assert.equal(kv.stats.walQuestions, questions);
      assert.equal(kv.stats.walSwitches, 0);
      assert.equal((await kv.get(k(0x13)))?.toString(), 'third');
    } finally {
      await kv.close();
      await t.remove();
    }
  });

  test('a durable commit that wrote nothing asks which WAL is current while it fdatasyncs, not after', async () => {
    const t = await tempDir('parallel');
    const kv = await openRocksKv(t.dir);
    const inner = kv as unknown as { db: { currentWalFile(): Promise<unknown> }; datasync(h: unknown): Promise<void> };
    try {
      await kv.write((b) => b.put(k(0x10), v('first')), { durable: false });
      await kv.write((b) => b.put(k(0x10), v('first')), { durable: true });
      const order: string[] = [];
      const ask = inner.db.currentWalFile.bind(inner.db);
      inner.db.currentWalFile = async () => {
        order.push('asked');
        const wal = await ask();
        // A slow answer: an fdatasync that waited for it would come after 'answered'.
        await new Promise((r) => setTimeout(r, 30));
        order.push('answered');
        return wal;
      };
      const sync = inner.datasync.bind(inner);
      inner.datasync = (h) => {
        order.push('datasync');
        return sync(h);
      };
      // No growth of the WAL synced last (nothing written): the commit cannot tell a switch from nothing, and asks.
      await kv.write(() => undefined, { durable: true });
      assert.deepEqual(order, ['asked', 'datasync', 'answered']);
      assert.equal(kv.stats.walSwitches, 0);
    } finally {
      await kv.close();
      await t.remove();
    }
  });

  test('WAL switches are followed: old WALs synced, directory synced, data intact after reopen', async () => {
    const t = await tempDir('walswitch');
    // A 64 KiB memtable makes RocksDB switch WALs every few writes.
    let kv = await openRocksKv(t.dir, { writeBufferSize: 64 * 1024 });
    try {
      for (let round = 0; round < 40; round++) {
        await Promise.all(
          Array.from({ length: 5 }, (_, i) => kv.write((b) => b.put(k(0x10, round, i), Buffer.alloc(4000, round)), { durable: true })),
        );
      }
      assert.ok(kv.stats.walSwitches > 0, 'no WAL switch observed');
      assert.ok(kv.stats.dirSyncs > 1);
      // Every switch was noticed: the WAL synced last is the current one, and the commits asked only
      // when the WAL they had synced last did not grow (about once per switch, not once per commit).
      const inner = kv as unknown as { db: { currentWalFile(): Promise<{ number: number }> }; wal: { number: number } | null };
      assert.equal(inner.wal!.number, (await inner.db.currentWalFile()).number);
      assert.ok(kv.stats.walQuestions < kv.stats.commits / 2, `${kv.stats.walQuestions} questions for ${kv.stats.commits} commits`);
      await kv.close();
      kv = await openRocksKv(t.dir);
      let n = 0;
      for await (const [key, value] of kv.iterate({ gte: k(0x10), lt: k(0x11) })) {
        assert.equal(value[0], key[1]);
        n++;
      }
      assert.equal(n, 200);
    } finally {
      await kv.close();
      await t.remove();
    }
  });

  test('an inverted delRange is refused before it reaches RocksDB, which stays writable', async () => {
    const t = await tempDir('fail');
    const kv = await openRocksKv(t.dir);
    try {
      // Reaching RocksDB, this would turn the database read-only (memtable insert fails after the WAL write).
      const bad = kv.write((b) => b.delRange(k(0x10, 9), k(0x10, 1)), { durable: true });
      await assert.rejects(bad, RangeError);
      await kv.write((b) => b.put(k(0x10), v('ok')), { durable: true });
      assert.equal((await kv.get(k(0x10)))?.toString(), 'ok');
    } finally {
      await kv.close();
      await t.remove();
    }
  });
});
