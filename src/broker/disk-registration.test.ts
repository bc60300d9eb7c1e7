// Goal: a data directory that did not found its cluster keeps proposing its registration until the
// metadata it applies holds it (disk-registration.ts), and a founding directory proposes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registerDisk } from './disk-registration.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { DiskRegistration } from '../metadata/disk-registry.js';

const quiet = { info: () => undefined, warn: () => undefined };

test('proposes through failures (no leader yet, a refusal) until its registration is applied here, then stops', async () => {
  let registered: DiskRegistration | undefined;
  const proposed: MetadataCommand[] = [];
  let calls = 0;
  await registerDisk({
    node: 4,
    token: () => 'disk-4',
    foundingDisk: () => false,
    registered: () => registered,
    propose: async (cmd) => {
      proposed.push(cmd);
      calls++;
      if (calls === 1) throw new Error('no metadata leader');
      if (calls === 2) return { ok: false, reason: 'limit', detail: 'full' };
      // Committed; this node applies it a little later.
      setTimeout(() => (registered = { node: 4, disk: 'disk-4', firstGroup: 7 }), 5);
      return { ok: true };
    },
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    stopped: () => false,
    retryMs: 10,
    logger: quiet,
  });
  assert.equal(registered?.disk, 'disk-4');
  assert.ok(proposed.length >= 3);
  assert.ok(proposed.every((c) => c.op === 'node.disk' && c.node === 4 && c.disk === 'disk-4'));
});

test('a founding directory, or one registered under its token already, proposes nothing; another token is registered anew', async () => {
  const proposed: MetadataCommand[] = [];
  const base = {
    node: 1,
    propose: async (cmd: MetadataCommand) => (proposed.push(cmd), { ok: true as const }),
    sleep: async () => undefined,
    stopped: () => false,
    retryMs: 1,
    logger: quiet,
  };
  await registerDisk({ ...base, token: () => 'a', foundingDisk: () => true, registered: () => undefined });
  await registerDisk({ ...base, token: () => 'a', foundingDisk: () => false, registered: () => ({ node: 1, disk: 'a', firstGroup: 3 }) });
  assert.equal(proposed.length, 0);
  let reg: DiskRegistration | undefined = { node: 1, disk: 'a', firstGroup: 3 };
  await registerDisk({ ...base, token: () => 'a/lost-1', foundingDisk: () => false, registered: () => reg, propose: async (cmd) => (proposed.push(cmd), (reg = { node: 1, disk: 'a/lost-1', firstGroup: 9 }), { ok: true }) });
  assert.deepEqual(proposed, [{ op: 'node.disk', node: 1, disk: 'a/lost-1' }]);
});

test('stops when the node stops, registered or not', async () => {
  let stopped = false;
  let proposals = 0;
  await registerDisk({
    node: 2,
    token: () => 'b',
    foundingDisk: () => false,
    registered: () => undefined,
    propose: async () => {
      proposals++;
      if (proposals === 3) stopped = true;
      throw new Error('no leader');
    },
    sleep: async () => undefined,
    stopped: () => stopped,
    retryMs: 1,
    logger: quiet,
  });
  assert.equal(proposals, 3);
});
