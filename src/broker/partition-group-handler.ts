/**
 * What the transport delivers to a partition group hosted here (transport GroupHandler): Raft
 * messages (an append whose entry arrived damaged is dropped; a snapshot may first fetch the log),
 * forwarded appends, control commands, and reads, bounds and log fetches of other nodes.
 */
import { nodeOfMember } from '../core/member-id.js';
import { checkArrived } from '../log/partition-entry.js';
import type { Message } from '../raft/index.js';
import type { GroupHandler } from '../transport/index.js';
import type { AppendAnswer, ForwardedAppend } from './partition-replicas-types.js';
import { serveControl } from './partition-control.js';
import type { PartitionHistoryFetch } from './partition-history-fetch.js';
import type { PartitionRemoteReads } from './partition-remote-reads.js';
import type { PartitionReplica } from './partition-replica.js';
import { logChunkBytes, type ReplicasContext } from './partition-replicas-context.js';

export class PartitionGroupHandlers {
  readonly #c: ReplicasContext;
  readonly #history: PartitionHistoryFetch;
  readonly #remote: PartitionRemoteReads;
  readonly #appendForwarded: (req: ForwardedAppend) => Promise<AppendAnswer>;
  /** Appends dropped on this node because an entry arrived damaged (the first ten and every 100th are logged). */
  #damagedArrivals = 0;

  constructor(c: ReplicasContext, history: PartitionHistoryFetch, remote: PartitionRemoteReads, appendForwarded: (req: ForwardedAppend) => Promise<AppendAnswer>) {
    this.#c = c;
    this.#history = history;
    this.#remote = remote;
    this.#appendForwarded = appendForwarded;
  }

  /** What the transport delivers to a partition group hosted here. */
  for(r: PartitionReplica): GroupHandler {
    const id = r.groupId;
    return {
      receive: (m) => {
        if (m.type === 'snap') void this.#history.catchUp(r, m);
        // An entry whose checksum fails arrived damaged: the whole append is dropped (Raft takes it as
        // lost and the leader sends it again). Taken, it would commit with the intact copies of the
        // others and then get no offsets here (apply drops what does not decode): this replica's
        // offsets would differ from theirs from there on.
        else if (m.type === 'app' && !this.#arrivedIntact(r, m)) return;
        // While the replica applies fetched entries by itself, nothing may move the group's log or
        // commit index: an append that let the group commit those entries too would apply them twice
        // (a damaged member's leader probes it while its snapshot is pending). Raft resends.
        else if (!this.#history.catchingUp(id)) this.#c.o.host.receive(id, m);
      },
      unreachable: (peer) => r.group.raw.reportUnreachable(peer),
      snapshotStatus: (peer, delivered) => this.#c.o.host.snapshotStatus(id, peer, delivered),
      append: (_from, req) => this.#appendForwarded(req),
      control: (_from, req) => serveControl(r, req, this.#c.o.clock),
      read: (_from, req, signal) => this.#remote.serve(r, req, signal),
      bounds: async () => {
        const b = r.bounds();
        return { oldest: b.oldest, newest: b.newest, epoch: r.group.term, leader: nodeOfMember(r.group.leader) };
      },
      fetchLog: (_from, req, signal) => {
        // Committed entries only (applied ones): those are the same on every replica that holds them,
        // so a replica may fetch them from any other, not only from its leader.
        // A replica still fetching the log before its snapshot holds a part of it at most: it serves
        // nothing below its snapshot, never a log with a hole, and says so with an answer that ends
        // without entries (the asker takes it for a replica without that log and asks another). A
        // refusal the asker took for a passing one kept two replicas fetching the same log, which the
        // third had removed meanwhile, asking each other for good (host simulation seed 277). One that
        // gave that fetch up holds its log from its snapshot on, as if its retention had gone that far:
        // it serves from there (the asker sees where its log starts).
        const floor = r.logFloor;
        const fetching = r.pendingHistory !== undefined;
        const chunks = r.readLog(Math.max(req.fromIndex, floor ?? 0), Math.min(req.toIndex, r.group.applied), Math.min(req.maxBytes, logChunkBytes), signal);
        return (async function* () {
          if (fetching && floor !== undefined && req.fromIndex < floor) return;
          for await (const entries of chunks) yield { entries };
        })();
      },
    };
  }

  #arrivedIntact(r: PartitionReplica, m: Message): boolean {
    for (const e of m.entries) {
      if (e.type !== 'normal') continue;
      try {
        checkArrived(e.data);
      } catch (err) {
        this.#damagedArrivals++;
        if (this.#damagedArrivals <= 10 || this.#damagedArrivals % 100 === 0) {
          this.#c.o.logger.warn({ topic: r.topic, partition: r.partition, group: r.groupId, from: m.from, index: e.index, err: (err as Error).message, dropped: this.#damagedArrivals }, 'dropped an append whose entry arrived damaged; its leader sends it again');
        }
        return false;
      }
    }
    return true;
  }
}
