// Goal: partition groups across three nodes in one process, through the same code the broker runs
// (RaftNodeHost, PartitionReplicas) over in-memory KVs and an in-memory network that can cut a node
// off: forwarded publishes, identical replicas, leadership handed back to the preferred leader, and a
// follower that lagged behind its leader's memory tail catching up by log shipping.
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv } from '../log/index.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, systemTicks } from './raft-host/node-host.js';
const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
let seed = 1;
const random = { next: () => ((seed = (seed * 16807) % 2147483647) / 2147483647), int: (n) => Math.floor(random.next() * n), uuid: () => randomUUID() };
async function cluster(memoryEntries = 1024, ids = [1, 2, 3], opts = {}) {
    const down = new Set();
    const nodes = new Map();
    const placement = (topic, partition) => ({ group: 100 + topic * 8 + partition, replicas: [1, 2, 3] });
    const linked = (a, b) => !down.has(a) && !down.has(b);
    for (const id of ids) {
        const kv = new MemoryKv();
        const handlers = new Map();
        const host = new RaftNodeHost({ self: id, kv, tickMs: 10, clock, ticks: systemTicks, logger: logger.child({ node: id }), onFatal: (err) => (opts.onFatal === undefined ? assert.fail(String(err)) : opts.onFatal(id, err)) });
        const replicas = new PartitionReplicas({
            self: id,
            kv,
            host,
            placement,
            clock,
            random,
            logger: logger.child({ node: id }),
            electionTicks: 10,
            heartbeatTicks: 1,
            appendTimeoutMs: 3000,
            memoryEntries,
            groups: { register: (g, h) => handlers.set(g, h), unregister: (g) => handlers.delete(g) },
        });
        replicas.setForwarder({
            forwardAppend: async (to, req) => {
                if (!linked(id, to))
                    return { status: 'unavailable', detail: 'unreachable' };
                const h = nodes.get(to).handlers.get(req.group);
                return h?.append === undefined ? { status: 'notLeader', leaderHint: 0, epoch: 0 } : h.append(id, req);
            },
            fetchLog: (to, req, signal) => {
                const h = nodes.get(to).handlers.get(req.group);
                if (!linked(id, to) || h?.fetchLog === undefined)
                    throw new Error('unreachable');
                return h.fetchLog(id, req, signal ?? new AbortController().signal);
            },
            read: (to, req, signal) => {
                const h = nodes.get(to).handlers.get(req.group);
                if (!linked(id, to) || h?.read === undefined)
                    throw new Error('unreachable');
                return h.read(id, req, signal ?? new AbortController().signal);
            },
            bounds: async (to, req) => {
                const h = nodes.get(to).handlers.get(req.group);
                if (!linked(id, to) || h?.bounds === undefined)
                    throw new Error('unreachable');
                return h.bounds(id, req);
            },
        });
        host.start({
            send: (groups) => {
                for (const { group, messages } of groups) {
                    for (const m of messages) {
                        setImmediate(() => {
                            if (linked(m.from, m.to))
                                nodes.get(m.to)?.handlers.get(group)?.receive(opts.tamper?.(m) ?? m);
                        });
                    }
                }
            },
        });
        nodes.set(id, { id, host, replicas, handlers });
    }
    return {
        nodes,
        down,
        node: (id) => nodes.get(id),
        async close() {
            for (const n of nodes.values()) {
                await n.replicas.close();
                await n.host.close();
            }
        },
    };
}
async function until(what, probe, timeoutMs = 8000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
        const v = probe();
        if (v !== undefined && v !== false)
            return v;
        if (Date.now() > end)
            assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
    }
}
const ev = (s) => Buffer.from(JSON.stringify({ s }));
async function readAll(r, partition) {
    const out = [];
    let after = -1;
    for (;;) {
        const got = await r.read(1, partition, after, 500, 1 << 20);
        if (got.length === 0)
            return out;
        for (const e of got)
            out.push(JSON.parse(e.bytes.toString()).s);
        after = got[got.length - 1].offset;
    }
}
test('three nodes: a publish on any node is forwarded to the leader, acknowledged once, and every replica holds the same log', async () => {
    const c = await cluster();
    try {
        for (const n of c.nodes.values())
            await n.replicas.ensure(1, 0);
        const leader = await until('a leader', () => [...c.nodes.values()].find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
        const sent = [];
        for (let i = 0; i < 30; i++) {
            const via = c.node(((i % 3) + 1));
            const [r] = await via.replicas.append([{ topic: 1, partition: 0, events: [ev(`e${i}a`), ev(`e${i}b`)] }]);
            assert.ok(r !== undefined && r.ok, `publish ${i} via node ${via.id}: ${r !== undefined && !r.ok ? r.error.message : ''}`);
            assert.equal(r.first, 2 * i, 'dense offsets in acknowledgement order');
            sent.push(`e${i}a`, `e${i}b`);
        }
        await until('every replica applied everything', () => [...c.nodes.values()].every((n) => n.replicas.bounds(1, 0).newest === 59));
        for (const n of c.nodes.values())
            assert.deepEqual(await readAll(n.replicas, 0), sent, `node ${n.id} (leader ${leader.id})`);
    }
    finally {
        await c.close();
    }
});
test('leadership goes back to the preferred leader once it is caught up', async () => {
    const c = await cluster();
    try {
        c.down.add(1);
        for (const n of c.nodes.values())
            await n.replicas.ensure(1, 0);
        const other = await until('a leader among 2 and 3', () => [2, 3].map((id) => c.node(id)).find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
        const [r] = await other.replicas.append([{ topic: 1, partition: 0, events: [ev('while-1-was-away')] }]);
        assert.ok(r?.ok);
        c.down.delete(1);
        await until('node 1 caught up', () => c.node(1).replicas.bounds(1, 0).newest === 0);
        await until('a transfer to node 1', () => other.replicas.balanceLeaders() > 0 || c.node(1).replicas.replica(1, 0).group.isLeader());
        await until('node 1 leads', () => c.node(1).replicas.replica(1, 0).group.isLeader());
        assert.equal(c.node(1).replicas.balanceLeaders(), 0, 'the preferred leader keeps its leadership');
    }
    finally {
        await c.close();
    }
});
test('a follower that fell behind the leader\'s memory tail fetches the log it lacks and converges', async () => {
    const c = await cluster(16);
    try {
        for (const n of c.nodes.values())
            await n.replicas.ensure(1, 0);
        await until('a leader', () => [...c.nodes.values()].find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
        const leader = [...c.nodes.values()].find((n) => n.replicas.replica(1, 0).group.isLeader());
        const lagging = [...c.nodes.values()].find((n) => n !== leader);
        c.down.add(lagging.id);
        const sent = [];
        for (let i = 0; i < 400; i++) {
            const [r] = await leader.replicas.append([{ topic: 1, partition: 0, events: [ev(`x${i}`)] }]);
            assert.ok(r?.ok, `publish ${i}`);
            sent.push(`x${i}`);
        }
        const mem = leader.replicas.replica(1, 0).group.store.storage;
        assert.ok(mem.firstIndex() > 16, `the leader dropped the oldest entries from memory (first in memory: ${mem.firstIndex()})`);
        c.down.delete(lagging.id);
        await until('the lagging follower converged', () => lagging.replicas.bounds(1, 0).newest === 399, 15_000);
        assert.deepEqual(await readAll(lagging.replicas, 0), sent);
    }
    finally {
        await c.close();
    }
});
test('a node holding no replica publishes through the leader and reads, waits and learns bounds from a replica', async () => {
    const c = await cluster(1024, [1, 2, 3, 4]);
    try {
        for (const n of c.nodes.values())
            await n.replicas.ensure(1, 0);
        assert.equal(c.node(4).replicas.replica(1, 0), undefined, 'node 4 is not a replica');
        await until('a leader', () => [1, 2, 3].map((id) => c.node(id)).find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
        const four = c.node(4).replicas;
        const [r] = await four.append([{ topic: 1, partition: 0, events: [ev('a'), ev('b')] }]);
        assert.ok(r !== undefined && r.ok, 'published through node 4');
        assert.deepEqual(await readAll(four, 0), ['a', 'b']);
        // A wait on node 4 ends when another node publishes.
        const ac = new AbortController();
        const waited = four.waitForEvents(1, 0, 1, ac.signal);
        const [r2] = await c.node(2).replicas.append([{ topic: 1, partition: 0, events: [ev('c')] }]);
        assert.ok(r2?.ok);
        await waited;
        await until('node 4 learns the new bounds', () => four.bounds(1, 0).newest === 2);
        assert.deepEqual(await readAll(four, 0), ['a', 'b', 'c']);
        // With every replica cut off, node 4 answers a retriable error, not a wrong answer.
        for (const id of [1, 2, 3])
            c.down.add(id);
        await assert.rejects(four.read(1, 0, -1, 10, 1000), /no replica could be read/);
    }
    finally {
        await c.close();
    }
});
// A leader's own entries are applied without checking their checksum again (the bytes never left its
// memory); every entry that came over the network still is. A follower handed a damaged entry gives
// it no offsets (it drops it as malformed) and never serves its events.
test('a follower checks the checksum of an entry that came over the network: one damaged on the way gets no offsets there', async () => {
    const tamper = (m) => {
        if (m.to !== 3 || m.type !== 'app' || m.entries.every((e) => e.data.byteLength < 40))
            return m;
        return {
            ...m,
            entries: m.entries.map((e) => {
                if (e.data.byteLength < 40)
                    return e;
                const bad = Buffer.from(e.data);
                bad[bad.length - 3] ^= 0x04;
                return { ...e, data: bad };
            }),
        };
    };
    const c = await cluster(1024, [1, 2, 3], { tamper });
    try {
        for (const n of c.nodes.values())
            await n.replicas.ensure(1, 0);
        const leader = await until('node 1 leads', () => (c.node(1).replicas.replica(1, 0)?.group.isLeader() ? c.node(1) : undefined));
        const [r] = await leader.replicas.append([{ topic: 1, partition: 0, events: [ev('intact-on-1-and-2')] }]);
        assert.ok(r?.ok, 'committed by nodes 1 and 2');
        const index = leader.replicas.replica(1, 0).group.applied;
        await until('node 3 applied up to the entry', () => c.node(3).replicas.replica(1, 0).group.applied >= index);
        assert.equal(c.node(3).replicas.bounds(1, 0).newest, -1, 'node 3 gave the damaged entry no offsets');
        assert.deepEqual(await readAll(c.node(2).replicas, 0), ['intact-on-1-and-2']);
    }
    finally {
        await c.close();
    }
});
//# sourceMappingURL=partition-replicas.multi.test.js.map