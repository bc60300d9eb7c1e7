// Goal: a member with valid credentials that sends garbage cannot crash or wedge a node: random and
// mutated bytes on every RPC of the node-to-node port are refused or dropped, whatever reaches the
// handler is within the documented limits, and the node serves correctly afterwards.
// Method: fast-check (seeded, bounded) over random bytes and single-byte mutations of valid requests,
// sent as raw bytes (an identity serializer) with a valid proof to a real transport; invariant checks on
// everything the recording handler received; a valid exchange at the end, and the process's memory.
// `npm test` runs 300 cases; `npm run fuzz` (BROOK_FUZZ_RUNS, BROOK_FUZZ_SEED) many more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { makeMessage } from '../raft/index.js';
import { proveCall } from './auth.js';
import { toWireMessage } from './codec.js';
import { toWireAppendRequest, toWireReadRequest } from './forward-codec.js';
import { toWireFetchLogRequest } from './log-codec.js';
import { forwardProto, raftProto } from './proto.js';
import { indexMax, termMax } from './limits.js';
import { startNodes, stopNodes, testSecurity, until } from './test-support.js';
const bytes = (b) => b;
test('random and mutated bytes on every RPC never crash the node or reach a handler out of bounds', { timeout: Math.max(120_000, Number(process.env['BROOK_FUZZ_RUNS'] ?? 300) * 200) }, async () => {
    const rssBefore = process.memoryUsage().rss;
    let identities = 0;
    const nodes = await startNodes(2, () => ({ identify: () => (identities++, { nodeId: 2, diskId: 'disk-2', clusterId: '', founders: [] }) }));
    const n2 = nodes[1];
    n2.h.onRead = async function* () { };
    n2.h.onFetchLog = async function* () { };
    const client = new grpc.Client(`127.0.0.1:${n2.t.port}`, grpc.credentials.createInsecure());
    const meta = (path) => {
        const m = new grpc.Metadata();
        m.set('x-brook-from', '1');
        m.set('x-brook-auth', proveCall(testSecurity.secret, 1, 2, path, Date.now()));
        return m;
    };
    const R = raftProto();
    const F = forwardProto();
    const hb = toWireMessage(makeMessage({ type: 'app', from: 1, to: 2, term: 3, index: 4, logTerm: 3, entries: [{ term: 3, index: 5, type: 'normal', data: Buffer.from('x') }] }));
    const valid = {
        '/brook.raft.v1.RaftTransport/Stream': R.MessageBatch.serialize({ from: '1', messages: [{ ...hb, group: 7 }], heartbeats: [{ group: 9, term: '3', commit: '1', context: 'c' }] }),
        '/brook.raft.v1.RaftTransport/Propose': R.ProposeRequest.serialize({ from: '1', command: Buffer.from('{"op":"x"}'), flow_id: 'f', deadline_ms: 100 }),
        '/brook.raft.v1.RaftTransport/Identify': R.IdentifyRequest.serialize({ from: '1', disk_id: 'disk-1' }),
        '/brook.raft.v1.RaftTransport/FetchLog': R.FetchLogRequest.serialize(toWireFetchLogRequest({ group: 5, fromIndex: 1, toIndex: 9, maxBytes: 100 })),
        '/brook.forward.v1.Forward/Append': F.AppendRequest.serialize(toWireAppendRequest({ group: 5, topic: 1, partition: 0, epoch: 2, requestId: 'r', flowId: 'f', deadlineMs: 100, events: [Buffer.from('{}')] })),
        '/brook.forward.v1.Forward/Read': F.ReadRequest.serialize(toWireReadRequest({ group: 5, topic: 1, partition: 0, afterOffset: -1, maxEvents: 5, maxBytes: 100, waitMs: 0, follow: false, flowId: 'f' })),
        '/brook.forward.v1.Forward/Bounds': F.BoundsRequest.serialize({ group: 5, topic: 1, partition: 0 }),
    };
    const send = (path, body) => new Promise((resolve) => {
        const opts = { deadline: Date.now() + 3000 };
        if (path.endsWith('/Stream')) {
            const call = client.makeClientStreamRequest(path, bytes, bytes, meta(path), opts, () => resolve());
            call.write(body);
            call.end();
        }
        else if (path.endsWith('/Read') || path.endsWith('/FetchLog')) {
            const call = client.makeServerStreamRequest(path, bytes, bytes, body, meta(path), opts);
            call.on('data', () => { });
            call.on('error', () => resolve());
            call.on('end', () => resolve());
        }
        else {
            client.makeUnaryRequest(path, bytes, bytes, body, meta(path), opts, () => resolve());
        }
    });
    try {
        await fc.assert(fc.asyncProperty(fc.constantFrom(...Object.keys(valid)), fc.oneof(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, v]) => ({ at, v }))), async (path, input) => {
            let body;
            if (Buffer.isBuffer(input))
                body = input;
            else {
                body = Buffer.from(valid[path]);
                if (body.length > 0)
                    body[input.at % body.length] = input.v;
            }
            await send(path, body);
        }), { numRuns: Number(process.env['BROOK_FUZZ_RUNS'] ?? 300), seed: Number(process.env['BROOK_FUZZ_SEED'] ?? 42) });
        // Some of it got through the checks (mutations that stay valid), and all of that is within bounds.
        assert.ok(n2.h.received.length > 0 && n2.h.appends.length > 0 && n2.h.reads.length > 0, 'some mutations pass the checks');
        assert.ok(n2.t.decodeFailures() > 0, 'some are refused');
        for (const { group, m } of n2.h.received) {
            assert.ok(Number.isInteger(group) && group >= 0 && group <= 2 ** 32 - 1);
            assert.equal(m.from, 1);
            assert.equal(m.to, 2);
            assert.ok(m.term <= termMax && m.logTerm <= termMax && m.index <= indexMax && m.commit <= indexMax);
            m.entries.forEach((e, k) => assert.ok(e.index === m.index + 1 + k && e.term <= m.term));
        }
        for (const { req } of n2.h.appends)
            assert.ok(req.group > 0 && req.events.length > 0 && req.epoch <= termMax && req.requestId.length > 0);
        for (const { req } of n2.h.reads)
            assert.ok(req.group > 0 && req.maxEvents > 0 && req.afterOffset >= -1);
        for (const { req } of n2.h.fetches)
            assert.ok(req.fromIndex >= 1 && req.toIndex >= req.fromIndex && req.toIndex <= indexMax);
        // The node still serves.
        const before = n2.h.received.length;
        nodes[0].t.send([{ group: 3, messages: [makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 8, commit: 2 })] }]);
        await until('a heartbeat after the fuzzing', () => n2.h.received.length === before + 1);
        assert.equal((await nodes[0].t.forwardAppend(2, { group: 5, topic: 1, partition: 0, epoch: 0, requestId: 'after', flowId: '', deadlineMs: 2000, events: [Buffer.from('{}')] })).status, 'committed');
        assert.ok(identities > 0, 'some Identify calls got through');
        assert.equal((await nodes[0].t.identify(2, 'disk-1', 2000))?.nodeId, 2);
        const grownMiB = (process.memoryUsage().rss - rssBefore) / 1048576;
        assert.ok(grownMiB < 512, `RSS grew by ${Math.round(grownMiB)} MiB`);
    }
    finally {
        client.close();
        await stopNodes(nodes);
    }
});
//# sourceMappingURL=fuzz.test.js.map