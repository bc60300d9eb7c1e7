import { noNode } from '../raft/index.js';
/** How long a client waits for an answer before it counts the outcome as unknown (virtual ms). */
const clientTimeoutMs = 2500;
/** The deadline a forwarded append carries (node ms). */
const forwardDeadlineMs = 600;
export class Clients {
    #ctx;
    #count;
    #ops = new Map();
    #seq = 0;
    constructor(ctx, count) {
        this.#ctx = ctx;
        this.#count = count;
    }
    start() {
        for (let c = 0; c < this.#count; c++)
            this.#ctx.at(this.#ctx.rng.between(20, 200), () => this.#step(c));
    }
    /** Whether any client still waits for an answer. */
    get busy() {
        return this.#ops.size > 0;
    }
    /** The node crashed: whatever a client was waiting for there has an unknown outcome. */
    nodeCrashed(node) {
        for (const op of [...this.#ops.values()])
            if (op.node === node)
                this.#finish(op, 'unknown', 'node crashed');
    }
    #step(client) {
        const ctx = this.#ctx;
        const r = ctx.rng;
        if (!ctx.chaos) {
            // Calm: the run checks recovery and convergence; producers wait for the next chaos.
            ctx.at(r.between(50, 150), () => this.#step(client));
            return;
        }
        const p = r.pick(ctx.partitions);
        const seq = this.#seq++;
        const batch = ctx.ledger.newBatch(`b${seq}`, p.index, r.between(1, 4));
        // Mostly a node that holds the partition, sometimes any (it forwards or cannot serve it).
        const candidates = r.chance(0.8) ? p.replicas.map((id) => ctx.node(id)) : [...ctx.nodes()];
        const node = r.pick(candidates);
        const op = { client, seq, batch, p, node, inc: node.incarnation, done: false };
        this.#ops.set(seq, op);
        ctx.at(clientTimeoutMs, () => this.#finish(op, 'unknown', 'client timeout'));
        if (!node.running || node.replicas === undefined) {
            // Connection refused: nothing was sent anywhere.
            ctx.log(`c${client} ${batch.id} p${p.index} -> n${node.id} refused (down)`);
            this.#finish(op, 'failed', 'node down');
            return;
        }
        if (r.chance(0.6))
            this.#append(op);
        else
            this.#forward(op, `r-${batch.id}`, 0);
    }
    #events(op) {
        return op.batch.payloads.map((s) => Buffer.from(s));
    }
    #append(op) {
        const ctx = this.#ctx;
        ctx.log(`c${op.client} ${op.batch.id} p${op.p.index} append via n${op.node.id} (${op.batch.payloads.length} events)`);
        op.node
            .replicas.append([{ topic: op.p.topic, partition: op.p.partition, events: this.#events(op) }])
            .then(([res]) => {
            if (op.done || op.node.incarnation !== op.inc)
                return;
            if (res === undefined)
                throw new Error('append answered nothing');
            if (res.ok)
                this.#ack(op, res.first, res.last);
            else if (res.error.name === 'KvWriteError') {
                ctx.stats.refusedBatches++;
                this.#finish(op, 'failed', res.error.message);
            }
            else
                this.#finish(op, 'unknown', res.error.message);
        })
            .catch((err) => ctx.fail(err));
    }
    #forward(op, requestId, attempt) {
        const ctx = this.#ctx;
        const node = op.node;
        if (!node.running || node.replicas === undefined) {
            this.#retry(op, requestId, attempt, noNode);
            return;
        }
        const inc = node.incarnation;
        op.inc = inc;
        const g = node.replicas.replica(op.p.topic, op.p.partition)?.group;
        const req = {
            group: op.p.group,
            topic: op.p.topic,
            partition: op.p.partition,
            // Usually any epoch; sometimes the term this node knows, which a newer leader refuses.
            epoch: g !== undefined && ctx.rng.chance(0.3) ? g.term : 0,
            requestId,
            flowId: `${op.batch.id}.${attempt}`,
            deadlineMs: forwardDeadlineMs,
            events: this.#events(op),
        };
        ctx.log(`c${op.client} ${op.batch.id} p${op.p.index} forward ${requestId} #${attempt} to n${node.id} epoch ${req.epoch}`);
        node
            .replicas.appendForwarded(req)
            .then((a) => {
            if (op.done || node.incarnation !== inc)
                return;
            if (a.status === 'committed')
                this.#ack(op, a.firstOffset, a.lastOffset);
            else
                this.#retry(op, requestId, attempt, a.status === 'notLeader' ? a.leaderHint : noNode);
        })
            .catch((err) => ctx.fail(err));
    }
    /** Sends the same request id again, to the hinted leader or another node. */
    #retry(op, requestId, attempt, hint) {
        const ctx = this.#ctx;
        if (op.done)
            return;
        ctx.stats.retries++;
        ctx.at(ctx.rng.between(5, 40), () => {
            if (op.done)
                return;
            const next = hint !== noNode && ctx.rng.chance(0.8) ? ctx.node(hint) : ctx.node(ctx.rng.pick(op.p.replicas));
            op.node = next;
            this.#forward(op, requestId, attempt + 1);
        });
    }
    #ack(op, first, last) {
        this.#ctx.ledger.acked(op.batch, first, last);
        this.#finish(op, 'acked', `${first}..${last}`);
    }
    #finish(op, outcome, why) {
        if (op.done)
            return;
        op.done = true;
        this.#ops.delete(op.seq);
        const ctx = this.#ctx;
        if (outcome === 'acked')
            ctx.stats.batchesAcked++;
        else if (outcome === 'failed') {
            ctx.stats.batchesFailed++;
            ctx.ledger.failed(op.batch);
        }
        else {
            ctx.stats.batchesUnknown++;
            ctx.ledger.unknown(op.batch);
        }
        ctx.log(`c${op.client} ${op.batch.id} ${outcome} (${why})`);
        ctx.at(ctx.rng.between(1, 30), () => this.#step(op.client));
    }
}
//# sourceMappingURL=host-clients.js.map