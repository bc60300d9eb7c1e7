/**
 * TEST-ONLY fixture of local-cluster.test.ts (run as a test file of its own by it, not by the suite):
 * a "cluster" whose one node accepts connections and never answers, and a test that times out while
 * it waits on that node, as a cluster test does when a node hangs. The file's process must end
 * anyway: LocalCluster.destroyWhenDone kills the node at the timeout, which fails the pending request.
 * HUNG_FIXTURE_NO_CLEANUP=1 leaves that out (what every cluster test did before).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalCluster } from './local-cluster.js';

const cluster = await LocalCluster.create('brook-hung-fixture-', {}, { nodes: 1 });
// A node that never answers, started detached like cluster/up starts nodes. The argument "main.js"
// is only there because cluster/down stops only processes whose command line names main.js.
const hung = `require('node:http').createServer(() => {}).listen(${cluster.base}, '127.0.0.1');`;
const node = spawn(process.execPath, ['-e', hung, 'main.js'], { detached: true, stdio: 'ignore' });
node.unref();
mkdirSync(join(cluster.dir, 'node1'), { recursive: true });
writeFileSync(join(cluster.dir, 'node1', 'pid'), String(node.pid));
writeFileSync(join(cluster.dir, 'size'), '1');
process.stdout.write(`# hung node pid ${node.pid}\n`);

test('a request to a node that never answers, past the test timeout', { timeout: 1500 }, async (t) => {
  if (process.env['HUNG_FIXTURE_NO_CLEANUP'] === undefined) cluster.destroyWhenDone(t);
  // Listening = a TCP connection is accepted (a request's client timeout could also fire before a
  // refused connection is reported, on a loaded machine, and take a node not yet listening for one).
  await cluster.until('the node to listen', 5000, () =>
    new Promise<true | undefined>((resolve) => {
      const s = connect(cluster.base, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(undefined));
    }),
  );
  try {
    // No client timeout: a test waiting on something that should answer and does not.
    await fetch(`${cluster.url(1)}/event-types`);
  } finally {
    cluster.destroy();
  }
});
