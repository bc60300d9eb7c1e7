// Goal: an operator-created storage holds its timelines' logs as partition groups in its own RocksDB
// directory; events that an earlier version wrote there (a PartitionStore, not replicated) stay
// readable, and new ones continue their offsets; a restart keeps both.
// Method: a PartitionStore written into <dir>/storages/<id> as the earlier version did (a timeline
// starting at offset 3), then the storage opened by openStorageReplicas on one node, twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Offset } from '../core/offset.js';
import { openRocksKv, PartitionStore } from '../log/index.js';
import { ManualClock, tempDir } from '../log/test-support.js';
import { openStorageReplicas, storageDir } from './storage-replicas.js';
import { mkdirSync } from 'node:fs';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });

test('a storage written by the version before partition groups is read through its groups, which continue its offsets', async () => {
  const tmp = await tempDir('storage-replicas');
  const clock = new ManualClock();
  try {
    mkdirSync(storageDir(tmp.dir, 'st'), { recursive: true });
    const oldKv = await openRocksKv(storageDir(tmp.dir, 'st'));
    const old = await PartitionStore.open(oldKv, { clock });
    await old.setBase(5, 0, 3);
    const [w] = await old.append([{ topic: 5, partition: 0, events: [Buffer.from('"a"'), Buffer.from('"b"')] }]);
    assert.ok(w?.ok);
    await old.close();
    await oldKv.close();

    const open = () =>
      openStorageReplicas({
        id: 'st',
        dataDir: tmp.dir,
        self: 1,
        placement: (topic, partition) => ({ group: 40 + partition, replicas: [1], start: topic === 5 ? 3 : 0 }),
        clock,
        random: { next: () => 0.5, int: () => 0, uuid: () => `r-${Math.random()}` },
        logger,
        tickMs: 50,
        electionTicks: 10,
        heartbeatTicks: 1,
        appendTimeoutMs: 3000,
        tailCacheBytesMax: 1 << 20,
        onFatal: (err) => assert.fail(String(err)),
      });
    const read = async (r: Awaited<ReturnType<typeof open>>) => {
      const out: string[] = [];
      for (let after = 2; ; ) {
        const got = await r.replicas.read(5, 0, after as Offset, 100, 1 << 20);
        if (got.length === 0) return out;
        for (const e of got) out.push(`${e.offset}:${e.bytes.toString()}`);
        after = got[got.length - 1]!.offset;
      }
    };
    let s = await open();
    await s.replicas.ensure(5, 0);
    assert.deepEqual(s.replicas.bounds(5, 0), { oldest: 3, newest: 4 });
    const [r] = await s.replicas.append([{ topic: 5, partition: 0, events: [Buffer.from('"c"')] }]);
    assert.ok(r !== undefined && r.ok && r.first === 5, JSON.stringify(r));
    assert.deepEqual(await read(s), ['3:"a"', '4:"b"', '5:"c"']);
    await s.close();
    s = await open();
    await s.replicas.ensure(5, 0);
    assert.deepEqual(await read(s), ['3:"a"', '4:"b"', '5:"c"'], 'after a restart');
    await s.close();
  } finally {
    await tmp.remove();
  }
});
