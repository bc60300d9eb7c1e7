/**
 * A metadata group member for in-process tests: the production RaftMetadataGroup on its own node host
 * (RaftNodeHost, real timers), as a node runs it, minus the partitions. Tests wire members with an
 * in-memory transport that carries both the host's messages and the group's forwarded proposals.
 */
import { RaftMetadataGroup } from '../broker/metadata-group.js';
import { RaftNodeHost, systemTicks } from '../broker/raft-host/node-host.js';
const hosts = new WeakMap();
/** Opens a member on a node host of its own (not started: see startMember). */
export async function openMember(o) {
    const host = new RaftNodeHost({
        self: o.self,
        kv: o.kv,
        ...(o.disk === undefined ? {} : { disk: o.disk }),
        tickMs: o.tickMs,
        clock: o.clock,
        ticks: systemTicks,
        logger: o.logger,
        onFatal: (err) => {
            if (o.onFatal === undefined)
                throw err;
            o.onFatal(err);
        },
    });
    const g = await RaftMetadataGroup.open({ ...o, host });
    hosts.set(g, host);
    return g;
}
/** Starts the member's host (ticks, sends through `t`) and the group on it. */
export function startMember(g, t) {
    hostOf(g).start(t);
    g.start(t);
}
export function hostOf(g) {
    const h = hosts.get(g);
    if (h === undefined)
        throw new Error(`node ${g.self} was not opened by openMember`);
    return h;
}
/** Closes the group, then its host. */
export async function closeMember(g) {
    await g.close();
    await hosts.get(g)?.close();
}
//# sourceMappingURL=metadata-member.js.map