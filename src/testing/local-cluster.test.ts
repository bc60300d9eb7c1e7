// Goal: a cluster test that times out while it waits on a node that never answers still ends (its
// file's process exits) and leaves no node running: otherwise `node --test` waits for it for ever.
// Method: runs hung-cluster-fixture.js as a test file of its own (node --test), bounded by a spawn
// timeout; reads the pid of its hung node from its output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
