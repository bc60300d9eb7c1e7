// Goal: deploy/ works: the image builds from deploy/Dockerfile, the three-node compose cluster elects
// one leader, and every node serves the whole interface: metadata written on one node is read on
// another, events published through each of the three nodes are read back, identical and in the same
// per-partition order, through each of the three nodes.
// Method: testcontainers (DESIGN.md names it) brings the compose file up with a build and waits for
// each node's /health; the test talks to the nodes over their published ports. Without a Docker engine
// and the compose plugin (this project's own machines have neither an engine nor compose) it is skipped
// with a message saying so. The compose project is always taken down with its volumes.
// The same check runs against any running three-node cluster (Kubernetes, cluster/up) when
// BROOK_DEPLOY_URLS lists its nodes' HTTP addresses, comma-separated; the compose part is then skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const services = ['brook1', 'brook2', 'brook3'];
const eventType = 'deploy.check';
const partitions = 4;
const perNode = 30;
/** Why the test cannot run here, or undefined. The CLI checks are fast and need no engine. */
function engineMissing() {
    const run = (args) => spawnSync('docker', args, { encoding: 'utf8', timeout: 30_000 }).status === 0;
    if (!run(['info']))
        return 'no Docker engine on this machine';
    if (!run(['compose', 'version']))
        return 'no docker compose plugin on this machine';
    return undefined;
}
async function json(url, init) {
    const r = await fetch(url, init);
    const text = await r.text();
    return { status: r.status, body: text === '' ? undefined : JSON.parse(text) };
}
/** Every event of every partition through one node: partition -> event ids in offset order. */
async function readAll(base, expected) {
    const cursors = JSON.stringify(Array.from({ length: partitions }, (_, p) => ({ partition: String(p), offset: 'BEGIN' })));
    const r = await fetch(`${base}/event-types/${eventType}/events?batch_limit=10&batch_flush_timeout=1&stream_limit=${expected}&stream_timeout=20`, {
        headers: { 'X-Nakadi-Cursors': cursors },
    });
    assert.equal(r.status, 200, await r.clone().text());
    const out = new Map();
    for (const line of (await r.text()).split('\n')) {
        if (line === '')
            continue;
        const batch = JSON.parse(line);
        const list = out.get(batch.cursor.partition) ?? [];
        for (const e of batch.events ?? [])
            list.push(e.metadata.eid);
        out.set(batch.cursor.partition, list);
    }
    return out;
}
/** The check itself, against the HTTP addresses of three nodes of one cluster. */
async function publishAndReadThroughEveryNode(bases) {
    // Every node sees the same metadata leader.
    const deadline = Date.now() + 90_000;
    let leaders = [];
    while (Date.now() < deadline) {
        leaders = await Promise.all(bases.map((b) => json(`${b}/cluster`).then((r) => r.body.metadata.leader, () => null)));
        if (leaders[0] !== null && leaders.every((l) => l === leaders[0]))
            break;
        await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(leaders[0] !== null && leaders.every((l) => l === leaders[0]), `leaders seen: ${JSON.stringify(leaders)}`);
    const body = {
        name: eventType,
        owning_application: 'deploy-test',
        category: 'business',
        enrichment_strategies: ['metadata_enrichment'],
        partition_strategy: 'hash',
        partition_key_fields: ['key'],
        default_statistic: { messages_per_minute: 1000, message_size: 100, read_parallelism: partitions, write_parallelism: partitions },
        schema: { type: 'json_schema', schema: '{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}' },
    };
    const created = await json(`${bases[0]}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await json(`${bases[2]}/event-types/${eventType}`)).status, 200);
    // Publish through each node in turn; every batch must be acknowledged (200).
    const sent = [];
    for (let n = 0; n < bases.length; n++) {
        for (let i = 0; i < perNode; i += 10) {
            const events = Array.from({ length: 10 }, (_, j) => {
                const k = n * perNode + i + j;
                const eid = `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
                sent.push(eid);
                return { key: `k${k % 7}`, metadata: { eid, occurred_at: new Date().toISOString() } };
            });
            const r = await json(`${bases[n]}/event-types/${eventType}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) });
            assert.equal(r.status, 200, `publish through node ${n + 1}: ${r.status} ${JSON.stringify(r.body)}`);
        }
    }
    // Read through each node: every acknowledged event once, and the same order per partition everywhere.
    const views = await Promise.all(bases.map((b) => readAll(b, sent.length)));
    for (let n = 0; n < views.length; n++) {
        const all = [...views[n].values()].flat();
        assert.deepEqual([...all].sort(), [...sent].sort(), `node ${n + 1} holds every acknowledged event exactly once`);
        for (const [p, ids] of views[0])
            assert.deepEqual(views[n].get(p), ids, `partition ${p} in the same order on node ${n + 1} as on node 1`);
    }
}
const urls = process.env['BROOK_DEPLOY_URLS']?.split(',').filter((u) => u !== '');
const missing = urls !== undefined ? 'BROOK_DEPLOY_URLS is set: the check runs against that cluster instead' : engineMissing();
test('deploy: the image builds and the three-node compose cluster publishes and reads through every node', { skip: missing, timeout: 20 * 60_000 }, async () => {
    const { DockerComposeEnvironment, Wait } = await import('testcontainers');
    let env = new DockerComposeEnvironment(join(repo, 'deploy'), 'docker-compose.yml').withProjectName('brook-deploy-test').withBuild();
    for (const s of services)
        env = env.withWaitStrategy(`${s}-1`, Wait.forHttp('/health', 8080).withStartupTimeout(180_000));
    const started = await env.up(services);
    try {
        await publishAndReadThroughEveryNode(services.map((s) => {
            const c = started.getContainer(`${s}-1`);
            return `http://${c.getHost()}:${c.getMappedPort(8080)}`;
        }));
    }
    finally {
        await started.down({ removeVolumes: true });
    }
});
test('deploy: a running cluster (BROOK_DEPLOY_URLS) publishes and reads through every node', { skip: urls === undefined ? 'BROOK_DEPLOY_URLS is not set' : undefined, timeout: 5 * 60_000 }, async () => {
    assert.equal(urls.length, 3, 'BROOK_DEPLOY_URLS lists three nodes');
    await publishAndReadThroughEveryNode(urls);
});
//# sourceMappingURL=deploy.docker.test.js.map