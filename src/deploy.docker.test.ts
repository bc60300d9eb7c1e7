// Goal: deploy/ works: the image builds from deploy/Dockerfile, the three-node docker-compose cluster
// elects one leader, and metadata written on one node is read on another.
// Method: the Docker CLI with an engine and the compose plugin; without them (this project's own
// machines have a Docker client but no engine) the test is skipped with a message saying so. The
// compose project is always taken down with its volumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const compose = ['compose', '-f', join(repo, 'deploy', 'docker-compose.yml'), '-p', 'brook-deploy-test'];
const nodes = [8081, 8082, 8083];

function docker(args: string[], timeoutMs = 60_000): { ok: boolean; out: string } {
  const r = spawnSync('docker', args, { cwd: repo, encoding: 'utf8', timeout: timeoutMs });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function engineMissing(): string | undefined {
  if (!docker(['info']).ok) return 'no Docker engine on this machine';
  if (!docker(['compose', 'version']).ok) return 'no docker compose plugin on this machine';
  return undefined;
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

const missing = engineMissing();
test('deploy: the image builds and the three-node compose cluster serves replicated metadata', { skip: missing, timeout: 15 * 60_000 }, async () => {
  try {
    const up = docker([...compose, 'up', '-d', '--build', 'brook1', 'brook2', 'brook3'], 12 * 60_000);
    assert.ok(up.ok, up.out);
    // Every node sees the same leader.
    const deadline = Date.now() + 90_000;
    let leaders: unknown[] = [];
    while (Date.now() < deadline) {
      leaders = await Promise.all(nodes.map((p) => json(`http://127.0.0.1:${p}/cluster`).then((r) => (r.body as { metadata: { leader: number | null } }).metadata.leader, () => null)));
      if (leaders[0] !== null && leaders.every((l) => l === leaders[0])) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(leaders[0] !== null && leaders.every((l) => l === leaders[0]), `leaders seen: ${JSON.stringify(leaders)}`);
    for (const p of nodes) assert.equal((await fetch(`http://127.0.0.1:${p}/health`)).status, 200);
    const body = { name: 'deploy.check', owning_application: 'deploy-test', category: 'undefined', schema: { type: 'json_schema', schema: '{}' } };
    const created = await json('http://127.0.0.1:8081/event-types', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(created.status, 201);
    assert.equal((await json('http://127.0.0.1:8083/event-types/deploy.check')).status, 200);
  } finally {
    docker([...compose, 'down', '-v'], 120_000);
  }
});
