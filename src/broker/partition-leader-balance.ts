/**
 * Leadership goes back to each partition's preferred leader (the first replica of its placement,
 * which the metadata leader spread evenly over the nodes) once that node is caught up: after a
 * failover or a restart the leaders would otherwise pile up on the nodes that stayed. A leader still
 * fetching the retained log before its snapshot hands its leadership to a replica that holds it. The
 * rules of whom to ask are leader-handoff-rule.ts.
 */
import type { NodeId, Status } from '../raft/index.js';
import type { PartitionReplica } from './partition-replica.js';
import type { ReplicasContext } from './partition-replicas-context.js';
import { handBackTo, handOffHeir } from './leader-handoff-rule.js';

export class PartitionLeaderBalance {
  readonly #c: ReplicasContext;
  /** Per group, the heir the last hand-off of an incomplete leader was asked of (#handOffIncomplete). */
  readonly #handOffTried = new Map<number, NodeId>();

  constructor(c: ReplicasContext) {
    this.#c = c;
  }

  /**
   * Called periodically; a transfer is asked only by the current leader, only to a voter whose log
   * matches its own, so it never costs availability beyond the moment of the hand-over. Returns the
   * number of transfers started.
   */
  balance(): number {
    let started = 0;
    for (const r of this.#c.byKey.values()) {
      const g = r.group;
      if (!g.isLeader()) continue;
      if (g.raw.incomplete) {
        if (this.#handOffIncomplete(r)) started++;
        continue;
      }
      let st: Status | undefined;
      const preferred = handBackTo(g.self, g.conf.voters, this.#c.o.placement(r.topic, r.partition), () => (st = g.raw.status()));
      if (preferred !== undefined && g.raw.transferLeadership(preferred)) {
        this.#c.o.host.kick(g.id);
        started++;
        this.#c.o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, to: preferred, term: st?.term }, 'handing partition leadership back to its preferred leader');
      }
    }
    return started;
  }

  /**
   * This node leads a group while it is still fetching the retained log before its snapshot (an
   * incomplete member campaigns late, but may be the only candidate, or be handed the leadership):
   * it hands the leadership to a complete voter that holds its whole log (the preferred leader
   * first), so that the leader is a full copy of the retained log. None: it goes on leading.
   */
  #handOffIncomplete(r: PartitionReplica): boolean {
    const g = r.group;
    const st = g.raw.status();
    const heir = handOffHeir(g.self, g.conf.voters, this.#c.o.placement(r.topic, r.partition)?.replicas ?? [], st, this.#handOffTried.get(g.id));
    if (heir === undefined || !g.raw.transferLeadership(heir)) return false;
    this.#handOffTried.set(g.id, heir);
    this.#c.o.host.kick(g.id);
    this.#c.o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, to: heir, term: st.term }, 'this partition leader is still fetching the retained log before its snapshot: handing the leadership to a replica that holds it');
    return true;
  }
}
