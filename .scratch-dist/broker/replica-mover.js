import { nextMoveAction } from '../metadata/replica-move-plan.js';
import { noNode } from '../raft/index.js';
import { placedOn } from './partition-replicas.js';
export class ReplicaMover {
    #o;
    /** Groups with a metadata step proposed and not answered yet. */
    #recording = new Set();
    /** Groups being dropped here. */
    #dropping = new Set();
    /** The last action logged per group (a waiting step is logged once, not every round). */
    #said = new Map();
    constructor(o) {
        this.#o = o;
    }
    /** One round over the replicas open here. Returns the actions taken (for tests and logs). */
    round() {
        const taken = [];
        for (const r of [...this.#o.replicas.held()]) {
            const placement = this.#o.placement(r.topic, r.partition);
            if (placement === undefined || placement.group !== r.groupId)
                continue;
            if (!placedOn(placement, this.#o.self)) {
                this.#drop(r);
                continue;
            }
            const a = this.#step(r, placement);
            if (a.kind !== 'idle' && a.kind !== 'wait')
                taken.push(a);
        }
        return taken;
    }
    /** Drops the data of groups stored here that the placement gives other nodes only (after a restart). */
    async dropStored() {
        let dropped = 0;
        for await (const g of this.#o.replicas.storedGroups()) {
            const placement = this.#o.placement(g.topic, g.partition);
            if (placement === undefined || placement.group !== g.group || placedOn(placement, this.#o.self))
                continue;
            this.#o.logger.info({ ...g }, 'dropping a partition replica moved to other nodes before the last stop');
            await this.#o.replicas.dropReplica(g.topic, g.partition, g.group);
            dropped++;
        }
        return dropped;
    }
    /** Opens this node's replica of a partition if its placement names this node (a new learner). */
    async open(topic, partition) {
        const placement = this.#o.placement(topic, partition);
        if (placement !== undefined && placedOn(placement, this.#o.self))
            await this.#o.replicas.ensure(topic, partition);
    }
    #step(r, placement) {
        const g = r.group;
        if (!g.isLeader())
            return { kind: 'idle' };
        // The common case, checked before the leader's status is built: no move, no learner anywhere.
        if (placement.moving === undefined && g.conf.learners.length === 0 && (placement.learners?.length ?? 0) === 0) {
            this.#said.delete(g.id);
            return { kind: 'idle' };
        }
        const st = g.raw.status();
        const progress = st.progress === undefined ? undefined : new Map([...st.progress].map(([n, p]) => [n, { match: p.match, recentActive: p.recentActive || n === this.#o.self, state: p.state }]));
        const a = nextMoveAction({
            self: this.#o.self,
            placement: { replicas: placement.replicas, ...(placement.learners === undefined ? {} : { learners: placement.learners }), ...(placement.moving === undefined ? {} : { moving: placement.moving }) },
            conf: g.conf,
            commit: st.commit,
            progress,
            leadTransferee: st.leadTransferee === noNode ? 0 : st.leadTransferee,
        });
        const log = (msg, extra = {}) => {
            const said = `${a.kind}:${msg}`;
            if (this.#said.get(g.id) === said)
                return;
            this.#said.set(g.id, said);
            this.#o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, term: st.term, ...extra }, msg);
        };
        switch (a.kind) {
            case 'idle':
                this.#said.delete(g.id);
                break;
            case 'wait':
                log(`replica move waits: ${a.why}`, { moving: placement.moving });
                break;
            case 'confChange': {
                const res = g.raw.proposeConfChange(a.change);
                if (res.ok) {
                    this.#o.host.kick(g.id);
                    log(`replica move: proposing ${a.change.type} of node ${a.change.nodeId}`, { moving: placement.moving, index: res.lastIndex });
                }
                else
                    log(`replica move: ${a.change.type} of node ${a.change.nodeId} not proposed (${res.reason})`);
                break;
            }
            case 'transfer':
                if (g.raw.transferLeadership(a.to)) {
                    this.#o.host.kick(g.id);
                    log(`replica move: this node leaves the group; handing leadership to node ${a.to}`);
                }
                break;
            case 'record':
                this.#record(r, g.id, a);
                break;
        }
        return a;
    }
    #record(r, group, a) {
        if (this.#recording.has(group))
            return;
        this.#recording.add(group);
        const cmd = { op: 'partition.move', group, step: a.step, from: a.from, to: a.to };
        this.#o
            .propose(cmd)
            .then((res) => {
            // Refused means the step is already recorded or the move was cancelled: the next round looks again.
            if (res.ok)
                this.#o.logger.info({ topic: r.topic, partition: r.partition, group, step: a.step, from: a.from, to: a.to }, `replica move: ${a.step} recorded`);
            else
                this.#o.logger.info({ group, step: a.step, detail: res.detail }, 'replica move: metadata refused the step (already recorded or cancelled)');
        })
            .catch((err) => this.#o.logger.warn({ err, group, step: a.step }, 'replica move: recording the step failed; retried'))
            .finally(() => this.#recording.delete(group));
    }
    #drop(r) {
        const group = r.groupId;
        if (this.#dropping.has(group))
            return;
        this.#dropping.add(group);
        this.#o.logger.info({ topic: r.topic, partition: r.partition, group }, 'partition replica moved to another node: dropping it here');
        this.#o.replicas
            .dropReplica(r.topic, r.partition, group)
            .catch((err) => this.#o.logger.error({ err, group }, 'dropping a moved partition replica failed; retried'))
            .finally(() => this.#dropping.delete(group));
    }
}
//# sourceMappingURL=replica-mover.js.map