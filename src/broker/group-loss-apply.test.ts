// Goal: the kept replica's node, waiting for its replica to open to act on an accepted loss
// (group-loss-apply.ts), stops waiting when the node shuts down: the wait polls for up to openWaitMs
// (10 minutes), and its timer kept the process alive as long after close.
// Method: groupLossApplied on a stand-in replica set whose replica never opens; the sleep is counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { groupLossApplied } from './group-loss-apply.js';
import type { PartitionReplicas } from './partition-replicas.js';

test('the wait for the kept replica to open ends when its replica set is closed', { timeout: 10_000 }, async () => {
  let closed = false;
  const store = { self: () => 2, hostedGroup: () => undefined, get isClosed() { return closed; } } as unknown as PartitionReplicas;
  let sleeps = 0;
  let reopened = 0;
  groupLossApplied(
    {
      stores: () => [store],
      reopen: () => void reopened++,
      logger: pino({ level: 'silent' }),
      openWaitMs: 60_000,
      sleep: async () => {
        sleeps++;
        await new Promise((r) => setImmediate(r));
      },
    },
    {
      op: 'partition.loss',
      group: 1,
      keep: 2,
      seen: { replicas: [1, 2, 3], learners: [] },
      floor: 7,
      loss: { id: 'L1', scope: 'partition', node: 2, event_type: 'a', partition: '0', group: 1, at: '2026-11-27T19:00:00.000Z', kept: { last_index: 12 }, damage: { index: 15, term: 3, reason: 'every replica damaged' }, term_before: 3, term: 0 },
    },
  );
  assert.equal(reopened, 1, 'the replica is opened to act on the loss');
  for (let k = 0; k < 20; k++) await new Promise((r) => setImmediate(r));
  assert.ok(sleeps > 0, 'it waits for the replica while the node runs');
  closed = true;
  for (let k = 0; k < 5; k++) await new Promise((r) => setImmediate(r));
  const atClose = sleeps;
  for (let k = 0; k < 50; k++) await new Promise((r) => setImmediate(r));
  assert.equal(sleeps, atClose, `it still polls after the close (${sleeps - atClose} more sleeps)`);
});
