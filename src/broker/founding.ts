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
import type { NodeId } from '../raft/index.js';
import type { PeerIdentity } from '../transport/index.js';
import type { FounderRecord } from './node-disk.js';

export type FoundingDecision =
  | { readonly kind: 'found'; readonly clusterId: string; readonly founders: readonly FounderRecord[] }
  | { readonly kind: 'join'; readonly clusterId: string; readonly learnedFrom: NodeId };

export interface FoundingOptions {
  readonly self: NodeId;
  readonly diskId: string;
  readonly peers: readonly NodeId[];
  /** Asks one peer; undefined when it does not answer. */
  readonly ask: (peer: NodeId) => Promise<PeerIdentity | undefined>;
  readonly sleep: (ms: number) => Promise<void>;
  readonly retryMs: number;
  readonly logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Stops waiting (the node is shutting down). */
  readonly stopped?: () => boolean;
}

/** The id of a cluster founded by `founders`: the same on every founder. */
export function clusterIdOf(founders: readonly FounderRecord[]): string {
  const list = [...founders].sort((a, b) => a.id - b.id).map((f) => `${f.id}=${f.diskId}`).join(',');
  return createHash('sha256').update(`brook-cluster/v1:${list}`).digest('hex').slice(0, 32);
}

export class FoundingStopped extends Error {
  override name = 'FoundingStopped';
}

export async function decideFounding(o: FoundingOptions): Promise<FoundingDecision> {
  for (let round = 0; ; round++) {
    if (o.stopped?.() === true) throw new FoundingStopped('stopped while waiting for peers to answer');
    const answers = await Promise.all(o.peers.map(async (p) => ({ peer: p, id: await o.ask(p) })));
    const silent: NodeId[] = [];
    const empty: Array<{ peer: NodeId; id: PeerIdentity }> = [];
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
        if (me !== undefined && me.diskId === o.diskId) return { kind: 'found', clusterId: id.clusterId, founders: id.founders };
        return { kind: 'join', clusterId: id.clusterId, learnedFrom: peer };
      }
      empty.push({ peer, id });
    }
    if (silent.length === 0) {
      const founders: FounderRecord[] = [{ id: o.self, diskId: o.diskId }, ...empty.map((e) => ({ id: e.peer, diskId: e.id.diskId }))].sort((a, b) => a.id - b.id);
      return { kind: 'found', clusterId: clusterIdOf(founders), founders };
    }
    if (round % 20 === 0) {
      o.logger.info({ waitingFor: silent, emptyPeers: empty.map((e) => e.peer) }, 'this data directory belongs to no cluster yet: waiting for every peer to answer before founding one or joining theirs');
    }
    await o.sleep(o.retryMs);
  }
}

/** What `foundOrJoin` needs of the node's data directory (node-disk.ts). */
export interface FoundingDisk {
  readonly identity: { readonly diskId: string; readonly clusterId: string; readonly founders: readonly FounderRecord[] };
  setCluster(clusterId: string, founders: readonly FounderRecord[]): Promise<void>;
}

/**
 * The founding voters of the metadata group, for a node whose group is empty: all listed nodes when
 * this node founds the cluster, none when it joins one that exists (it then starts empty, does not
 * vote and catches up). A directory that already belongs to a cluster is not asked about again: a
 * founder whose group is still empty (it stopped in between) founds, any other member joins. Without
 * `ask` (a cluster of one: nobody to ask) the node founds.
 */
export async function foundOrJoin(
  disk: FoundingDisk,
  self: NodeId,
  peers: readonly NodeId[],
  ask: FoundingOptions['ask'] | undefined,
  logger: FoundingOptions['logger'],
): Promise<NodeId[]> {
  const { diskId } = disk.identity;
  if (disk.identity.clusterId === '') {
    if (ask === undefined) {
      const founders = [{ id: self, diskId }];
      await disk.setCluster(clusterIdOf(founders), founders);
    } else {
      const d = await decideFounding({ self, diskId, peers, ask, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), retryMs: 500, logger });
      if (d.kind === 'found') {
        await disk.setCluster(d.clusterId, d.founders);
        logger.info({ clusterId: d.clusterId, founders: d.founders }, 'every peer is empty too: founding the cluster');
      } else {
        await disk.setCluster(d.clusterId, []);
        logger.warn({ clusterId: d.clusterId, learnedFrom: d.learnedFrom, diskId }, 'the peers already have a cluster: joining it as a new, empty member (this data directory was wiped or is new); this node will not vote until it has caught up from the leader');
      }
    }
  }
  const { founders } = disk.identity;
  return founders.some((f) => f.id === self && f.diskId === diskId) ? founders.map((f) => f.id) : [];
}
