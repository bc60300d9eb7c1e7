// Goal: Identify on real sockets (issue 9): a node asks a peer what its data directory is before it
// founds a cluster; the peer answers its node id, disk id, cluster id and founders; a peer without an
// identity to give, an unknown peer and a peer that is down all come back as "no answer".
// Method: GrpcTransports on 127.0.0.1 with port 0, with a dispatcher where no group is registered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupDispatcher, GrpcTransport } from './index.js';
const quiet = { debug() { }, info() { }, warn() { }, error() { } };
// No group registered: Identify works before any Raft group exists on the node.
const idle = new GroupDispatcher({ logger: quiet });
test('a peer answers what its data directory is; silence, an unknown peer and a peer that is down are no answer', async () => {
    let identity = { nodeId: 2, diskId: 'disk-2', clusterId: '', founders: [] };
    const b = await GrpcTransport.start({ self: 2, incarnation: 'b', listen: '127.0.0.1:0', peers: [], handler: idle, logger: quiet, identify: () => identity, security: 'insecure', isMember: () => true });
    const c = await GrpcTransport.start({ self: 3, incarnation: 'c', listen: '127.0.0.1:0', peers: [], handler: idle, logger: quiet, security: 'insecure', isMember: () => true });
    const a = await GrpcTransport.start({
        self: 1,
        incarnation: 'a',
        listen: '127.0.0.1:0',
        peers: [{ id: 2, raftAddress: `127.0.0.1:${b.port}` }, { id: 3, raftAddress: `127.0.0.1:${c.port}` }, { id: 4, raftAddress: '127.0.0.1:1' }],
        handler: idle,
        logger: quiet,
        security: 'insecure',
    });
    try {
        assert.deepEqual(await a.identify(2, 'disk-1', 2000), { nodeId: 2, diskId: 'disk-2', clusterId: '', founders: [] }, 'an empty peer');
        identity = { nodeId: 2, diskId: 'disk-2', clusterId: 'c-1', founders: [{ id: 1, diskId: 'disk-1' }, { id: 2, diskId: 'disk-2' }] };
        assert.deepEqual(await a.identify(2, 'disk-1', 2000), identity, 'a member of a cluster, with its founders');
        assert.equal(await a.identify(3, 'disk-1', 2000), undefined, 'a peer without an identity to give');
        assert.equal(await a.identify(4, 'disk-1', 500), undefined, 'a peer that is down');
        assert.equal(await a.identify(9, 'disk-1', 500), undefined, 'a node that is not a peer');
    }
    finally {
        await Promise.all([a.close(), b.close(), c.close()]);
    }
});
//# sourceMappingURL=identify.test.js.map