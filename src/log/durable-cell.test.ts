// Goal: a durable cell (the node's raft marker lives in one) reads back its latest value, survives a
// torn write of one slot by falling back to the previous value, and tells "never written" from
// "damaged". Method: FileCell on a temporary directory, slots damaged by writing into the file
// directly; MemoryCell for the same rules in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cellPayloadBytesMax, FileCell, MemoryCell } from './durable-cell.js';

test('a file cell: missing, then each value written, across reopening; a torn newest slot falls back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-cell-'));
  try {
    const path = join(dir, 'marker');
    const cell = new FileCell(path);
    assert.deepEqual(await cell.read(), { state: 'missing' });
    for (const v of ['one', 'two', 'three']) {
      await cell.write(Buffer.from(v));
      const r = await new FileCell(path).read();
      assert.equal(r.state === 'ok' && r.payload.toString(), v);
    }
    await cell.close();
    // 'three' is generation 3, in slot 1 (bytes 512..); tear it: the cell reads 'two' again.
    const image = readFileSync(path);
    image[512 + 15]! ^= 0xff;
    writeFileSync(path, image);
    const reopened = new FileCell(path);
    const r = await reopened.read();
    assert.equal(r.state === 'ok' && r.payload.toString(), 'two');
    // Writing after a reopen continues the generations (the next write must not overwrite 'two').
    await reopened.write(Buffer.from('four'));
    await reopened.close();
    const r2 = await new FileCell(path).read();
    assert.equal(r2.state === 'ok' && r2.payload.toString(), 'four');
    writeFileSync(path, Buffer.alloc(1024, 7));
    const r3 = await new FileCell(path).read();
    assert.equal(r3.state, 'corrupt');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a memory cell follows the same rules, and a payload must fit a slot', async () => {
  const cell = new MemoryCell();
  assert.deepEqual(await cell.read(), { state: 'missing' });
  await cell.write(Buffer.from('a'));
  await cell.write(Buffer.from('b'));
  const r = await cell.read();
  assert.equal(r.state === 'ok' && r.payload.toString(), 'b');
  cell.image![0]! ^= 1; // slot 0 holds generation 2 ('b')
  const back = await cell.read();
  assert.equal(back.state === 'ok' && back.payload.toString(), 'a');
  await assert.rejects(cell.write(Buffer.alloc(cellPayloadBytesMax + 1)), /exceeds/);
});

test('a file cell is opened O_DSYNC on Linux: each write is one durable pwrite (no separate fdatasync request)', async (t) => {
  if (process.platform !== 'linux') return t.skip('reads the open flags from /proc');
  const dir = mkdtempSync(join(tmpdir(), 'brook-cell-'));
  try {
    const path = join(dir, 'marker');
    const cell = new FileCell(path);
    await cell.write(Buffer.from('one'));
    const fd = readdirSync('/proc/self/fd').find((f) => {
      try {
        return readlinkSync(`/proc/self/fd/${f}`) === path;
      } catch {
        return false;
      }
    });
    assert.ok(fd !== undefined, 'the cell keeps its file open between writes');
    const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    assert.ok(flags !== null);
    assert.ok((parseInt(flags[1]!, 8) & constants.O_DSYNC) !== 0, `flags ${flags[1]} lack O_DSYNC`);
    await cell.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
