// Goal (issue 10, "cluster/up never sees a leader when authentication is on"): the local cluster
// scripts work with authentication on. cluster/up reads GET /cluster with a token (BROOK_TOKEN, or with
// static tokens the first token of the file), so it sees the leader and returns; cluster/status shows
// it; and a mode it has no token for is refused before any node starts, saying what to set.
// Method: cluster/up 2 (two real node processes, the cluster secret the script makes) in a temporary
// directory on free ports with BROOK_AUTH=static; cluster/down in a finally block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeClusterBase } from './testing/free-ports.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

test('cluster/up sees a leader with authentication on; without a token for the mode it stops at once', { timeout: 150_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-cluster-auth-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ tokens: { 'reader-token': { uid: 'reader', scopes: [] }, 'admin-token': { uid: 'brook-admin', scopes: [] } } }));
  const base = await freeClusterBase(2);
  const env: NodeJS.ProcessEnv = { ...process.env, BROOK_CLUSTER_DIR: join(dir, 'c'), BROOK_CLUSTER_PORT: String(base), BROOK_CLUSTER_NO_BUILD: '1', BROOK_CLUSTER_WAIT_MS: '20000', BROOK_AUTH: 'static', BROOK_AUTH_TOKENS_FILE: tokens };
  delete env['BROOK_TOKEN'];
  const run = (cmd: string, args: string[], extra: Record<string, string> = {}) => spawnSync(join(repo, 'cluster', cmd), args, { env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });
  // Also when the test times out (its finally runs only once what it awaits settles).
  t.after(() => run('down', []));
  try {
    const up = run('up', ['2']);
    assert.equal(up.status, 0, `${up.stdout}\n${up.stderr}`);
    assert.match(up.stdout, /leader: node [12]/);
    // The nodes do require a token: without one GET /cluster is 401.
    assert.equal((await fetch(`http://127.0.0.1:${base}/cluster`, { signal: AbortSignal.timeout(10_000) })).status, 401);
    const status = run('status', []);
    assert.match(status.stdout, /^1 +\d+ +(leader|follower) /m, status.stdout);
    // A token given explicitly is used; a refused one is reported, not waited on.
    const refused = run('up', ['2'], { BROOK_TOKEN: 'not-a-token' });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /refused the token/);
  } finally {
    run('down', []);
  }
  // A mode whose token the scripts cannot find: refused before any node starts.
  const noToken = run('up', ['2'], { BROOK_AUTH: 'tokeninfo', BROOK_AUTH_TOKEN_INFO_URL: 'http://127.0.0.1:1/info', BROOK_CLUSTER_DIR: join(dir, 'd') });
  assert.notEqual(noToken.status, 0);
  assert.match(noToken.stderr, /BROOK_TOKEN/);
  assert.equal(existsSync(join(dir, 'd', 'node1')), false, 'no node was started');
  rmSync(dir, { recursive: true, force: true });
});
