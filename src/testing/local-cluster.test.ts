// Goal: a cluster test that times out while it waits on a node that never answers still ends (its
// file's process exits) and leaves no node running: otherwise `node --test` waits for it for ever.
// Also: LocalCluster.created asks a setup POST again only after an answer of unknown outcome.
// Method: runs hung-cluster-fixture.js as a test file of its own (node --test), bounded by a spawn
// timeout; reads the pid of its hung node from its output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalCluster } from './local-cluster.js';

const fixture = join(dirname(fileURLToPath(import.meta.url)), 'hung-cluster-fixture.js');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a cluster test timed out on a node that never answers ends, and its node is gone', { timeout: 60_000 }, async () => {
  const started = Date.now();
  // Without the runner's marker, or the child would take itself for a file run by this process's runner.
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT'];
  const p = spawn(process.execPath, ['--test', fixture], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000, killSignal: 'SIGKILL' });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => p.on('close', (c, s) => resolve([c, s])));
  const pid = Number(/hung node pid (\d+)/.exec(out)?.[1]);
  try {
    assert.equal(signal, null, `the fixture's process did not end within 30 s (killed):\n${out}`);
    assert.equal(code, 1, `its test fails (timed out):\n${out}`);
    assert.match(out, /test timed out after 1500ms/);
    assert.ok(Date.now() - started < 25_000);
    assert.ok(Number.isInteger(pid) && pid > 0, out);
    assert.equal(alive(pid), false, `the hung node (pid ${pid}) still runs`);
  } finally {
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
  }
});

test('created: a 5xx is asked again, and 409 after it counts as done; 409 or 422 at once, or 5xx until the deadline, fail', { timeout: 60_000 }, async () => {
  const cluster = await LocalCluster.create('brook-created-test-', {}, { nodes: 1 });
  // Node 1's port answers the statuses of `script` in turn (the last one from then on).
  let script: number[] = [];
  let asked = 0;
  const stub = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(script[Math.min(asked++, script.length - 1)]!).end('{}'));
  });
  await new Promise<void>((r) => stub.listen(cluster.base, '127.0.0.1', r));
  const run = (statuses: number[], timeoutMs?: number) => {
    script = statuses;
    asked = 0;
    return cluster.created(1, '/event-types', { name: 'x' }, 409, timeoutMs);
  };
  try {
    assert.equal((await run([503, 409])).status, 409);
    assert.equal(asked, 2);
    assert.equal((await run([503, 500, 201])).status, 201);
    assert.equal(asked, 3);
    await assert.rejects(run([409]), /409/, 'a 409 without an earlier answer of unknown outcome is not ours');
    assert.equal(asked, 1, 'and it fails at once');
    await assert.rejects(run([503, 422]), /422/);
    assert.equal(asked, 2);
    await assert.rejects(run([503], 1000), /not done within 1000 ms/);
  } finally {
    stub.close();
    rmSync(cluster.dir, { recursive: true, force: true });
  }
});
