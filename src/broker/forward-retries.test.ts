import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ForwardRetries } from './forward-retries.js';

function recorder(): { lines: Record<string, unknown>[]; retries: (now: () => number) => ForwardRetries } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { lines, retries: (now) => new ForwardRetries(logger, now, 1000) };
}

test('the first retry of a partition is logged at once, with what the leader answered', () => {
  const r = recorder();
  const fr = r.retries(() => 5000);
  fr.note(2, 1, 1, 'notLeader', 2, 'not leader (hint 2, epoch 3)');
  assert.equal(r.lines.length, 1);
  assert.equal(r.lines[0]!.msg, 'publish parts retried: the partition leader did not take them');
  assert.deepEqual(r.lines[0]!.retries, { notLeader: 1 });
  assert.equal(r.lines[0]!.to, 2);
  assert.equal(r.lines[0]!.answer, 'not leader (hint 2, epoch 3)');
  assert.equal(r.lines[0]!.group, 2);
  assert.equal(r.lines[0]!.partition, 1);
});

test('a run of retries is one line a second per partition, counting what came between', () => {
  const r = recorder();
  let now = 0;
  const fr = r.retries(() => now);
  fr.note(2, 1, 1, 'notLeader', 2, 'a');
  for (let i = 0; i < 30; i++) {
    now += 30;
    fr.note(2, 1, 1, i % 3 === 0 ? 'unavailable' : 'notLeader', 2, `answer ${i}`);
    fr.note(3, 1, 2, 'noLeader');
  }
  // Group 2: the first line at 0; the 30 retries up to 900 ms wait for the second to pass.
  assert.equal(r.lines.filter((l) => l.group === 2).length, 1);
  now += 200;
  fr.note(2, 1, 1, 'notLeader', 2, 'last');
  const after = r.lines.filter((l) => l.group === 2);
  assert.equal(after.length, 2);
  assert.deepEqual(after[1]!.retries, { notLeader: 21, unavailable: 10 });
  assert.equal(after[1]!.answer, 'last');
  assert.equal(after[1]!.overMs, 1070);
  // Group 3 logged its first at once, on its own clock of lines.
  assert.equal(r.lines.filter((l) => l.group === 3).length, 1);
  assert.deepEqual(fr.totals, { notLeader: 22, unavailable: 10, moved: 0, noLeader: 30 });
});

test('a run that ends within the second of its last line is told of by the next publish (flush)', () => {
  const r = recorder();
  let now = 0;
  const fr = r.retries(() => now);
  fr.note(2, 1, 1, 'noLeader');
  now += 100;
  fr.note(2, 1, 1, 'noLeader');
  now += 100;
  fr.note(2, 1, 1, 'notLeader', 3, 'not leader (hint 3, epoch 4)');
  fr.flush();
  assert.equal(r.lines.length, 1, 'held back within the second');
  now = 1000;
  fr.flush();
  assert.equal(r.lines.length, 2);
  assert.deepEqual(r.lines[1]!.retries, { noLeader: 1, notLeader: 1 });
  assert.equal(r.lines[1]!.overMs, 900);
  fr.flush();
  assert.equal(r.lines.length, 2, 'nothing held back: nothing more');
});
