/**
 * Whether a node whose data directory belongs to no cluster yet founds one or joins one (issue 9).
 *
 * Locally a fresh directory and a wiped one look the same: empty. Before this rule, an empty node with
 * a peer list always wrote the founding configuration, so a node whose directory was wiped founded
 * its group again under its old node id, voting and acknowledging as if it still held what it had
 * lost. Now it asks every peer over the Raft transport what their directories are (Identify):
 *
 * - a peer that belongs to a cluster answers its cluster id and the founders it recorded (node and
 *   disk ids). If this node, with its present disk id, is among them, it is a founder that stopped
 *   before it finished founding: it founds, with that cluster id. Otherwise the cluster exists without
 *   this directory: the node joins it as a new, empty member (its raft group starts damaged, votes
 *   nowhere and catches up from the leader; src/broker/raft-log-store.ts);
 * - only when EVERY peer has answered that it belongs to no cluster does the node found one, with the
 *   founders being all of them (node id and disk id each) and the cluster id derived from that list,
 *   so every founder derives the same id without another round;
 * - a peer that does not answer is asked again, every `retryMs`, for as long as it takes: founding
 *   with a peer missing could found a second cluster beside an existing one.
 *
 * So a fresh cluster founds once all its nodes are up (cluster/up starts them together), and a node
 * can only found with peers that are empty too.
 */
import { createHash } from 'node:crypto';
/** The id of a cluster founded by `founders`: the same on every founder. */
export function clusterIdOf(founders) {
    const list = [...founders].sort((a, b) => a.id - b.id).map((f) => `${f.id}=${f.diskId}`).join(',');
    return createHash('sha256').update(`brook-cluster/v1:${list}`).digest('hex').slice(0, 32);
}
export class FoundingStopped extends Error {
    name = 'FoundingStopped';
}
export async function decideFounding(o) {
    for (let round = 0;; round++) {
        if (o.stopped?.() === true)
            throw new FoundingStopped('stopped while waiting for peers to answer');
        const answers = await Promise.all(o.peers.map(async (p) => ({ peer: p, id: await o.ask(p) })));
        const silent = [];
        const empty = [];
        for (const { peer, id } of answers) {
            if (id === undefined) {
                silent.push(peer);
                continue;
            }
            if (id.nodeId !== peer) {
                // Two nodes configured with each other's addresses, or a stale address: not a peer's answer.
                o.logger.warn({ peer, answeredAs: id.nodeId }, 'a peer answered with another node id; is the peer list right?');
                silent.push(peer);
                continue;
            }
            if (id.clusterId !== '') {
                const me = id.founders.find((f) => f.id === o.self);
                if (me !== undefined && me.diskId === o.diskId)
                    return { kind: 'found', clusterId: id.clusterId, founders: id.founders };
                return { kind: 'join', clusterId: id.clusterId, learnedFrom: peer };
            }
            empty.push({ peer, id });
        }
        if (silent.length === 0) {
            const founders = [{ id: o.self, diskId: o.diskId }, ...empty.map((e) => ({ id: e.peer, diskId: e.id.diskId }))].sort((a, b) => a.id - b.id);
            return { kind: 'found', clusterId: clusterIdOf(founders), founders };
        }
        if (round % 20 === 0) {
            o.logger.info({ waitingFor: silent, emptyPeers: empty.map((e) => e.peer) }, 'this data directory belongs to no cluster yet: waiting for every peer to answer before founding one or joining theirs');
        }
        await o.sleep(o.retryMs);
    }
}
//# sourceMappingURL=founding.js.map