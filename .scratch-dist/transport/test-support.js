import { GrpcTransport } from './raft-transport.js';
import { TransportError, } from './types.js';
export const quietLogger = { debug() { }, info() { }, warn() { }, error() { } };
/** The cluster secret test transports prove by default. */
export const testSecurity = { secret: Buffer.from('a test cluster secret, 32+ bytes long') };
/** A logger that keeps what it was asked to log. */
export class RecordingLogger {
    lines = [];
    debug(obj, msg) {
        this.lines.push({ level: 'debug', obj, msg });
    }
    info(obj, msg) {
        this.lines.push({ level: 'info', obj, msg });
    }
    warn(obj, msg) {
        this.lines.push({ level: 'warn', obj, msg });
    }
    error(obj, msg) {
        this.lines.push({ level: 'error', obj, msg });
    }
}
/** Records everything; each service answers through a replaceable function. */
export class RecordingHandler {
    received = [];
    proposals = [];
    appends = [];
    reads = [];
    fetches = [];
    boundsAsked = [];
    unreachables = [];
    snapshots = [];
    onPropose = async () => ({ status: 'applied', index: 42, result: Buffer.from('{"ok":true}') });
    onAppend = async (_from, req) => ({
        status: 'committed',
        epoch: req.epoch === 0 ? 1 : req.epoch,
        firstOffset: 0,
        lastOffset: req.events.length - 1,
    });
    onRead = () => {
        throw new TransportError('unavailable', 'no reads here');
    };
    onBounds = async () => ({ oldest: 0, newest: -1, epoch: 1, leader: 0 });
    onFetchLog = () => {
        throw new TransportError('unavailable', 'no log here');
    };
    receive(group, m) {
        this.received.push({ group, m });
    }
    unreachable(peer) {
        this.unreachables.push(peer);
    }
    snapshotStatus(group, peer, delivered) {
        this.snapshots.push([group, peer, delivered]);
    }
    propose(p) {
        this.proposals.push(p);
        return this.onPropose(p);
    }
    append(from, req) {
        this.appends.push({ from, req });
        return this.onAppend(from, req);
    }
    read(from, req, signal) {
        this.reads.push({ from, req });
        return this.onRead(from, req, signal);
    }
    bounds(from, req) {
        this.boundsAsked.push({ from, req });
        return this.onBounds(from, req);
    }
    fetchLog(from, req, signal) {
        this.fetches.push({ from, req });
        return this.onFetchLog(from, req, signal);
    }
}
/** How many calls of any kind reached the handler. */
export function callsSeen(h) {
    return h.received.length + h.proposals.length + h.appends.length + h.reads.length + h.fetches.length + h.boundsAsked.length;
}
export async function until(what, ok, ms = 5000) {
    const deadline = Date.now() + ms;
    while (!ok()) {
        if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
    }
}
/**
 * Transports for nodes 1..n on 127.0.0.1 (free ports), each a peer of every other, proving the test
 * secret; `extra` adds or replaces options per node.
 */
export async function startNodes(n, extra = () => ({})) {
    const nodes = [];
    for (let id = 1; id <= n; id++) {
        const h = new RecordingHandler();
        const t = await GrpcTransport.start({ self: id, incarnation: `inc-${id}`, listen: '127.0.0.1:0', peers: [], handler: h, logger: quietLogger, security: testSecurity, ...extra(id) });
        nodes.push({ id, t, h });
    }
    for (const a of nodes)
        for (const b of nodes)
            if (a !== b)
                a.t.addPeer({ id: b.id, raftAddress: `127.0.0.1:${b.t.port}` });
    return nodes;
}
export async function stopNodes(nodes) {
    await Promise.all(nodes.map((n) => n.t.close()));
}
//# sourceMappingURL=test-support.js.map