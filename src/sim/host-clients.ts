/**
 * Producers of the host simulation. Each sends one batch at a time (1 to 4 unique events) to a
 * partition through a random node, in one of two ways:
 *
 * - `append`: PartitionReplicas.append on that node, as the publish path calls it; the node proposes
 *   if it leads the partition and otherwise forwards the batch to the leader over the simulated
 *   network with its own request id, retrying "not leader" answers with the same id; sometimes one
 *   request carries batches for two or three partitions (a client batch split by partition), whose
 *   parts for the same leader node travel in one grouped call, each with its own outcome;
 * - `forward`: the batch arrives at the node as a forwarded append with a request id the client chose
 *   (as if another node forwarded it); the client retries "not leader", unavailable answers and lost
 *   calls with the same request id, on the hinted leader or another node, so a batch that committed
 *   before an answer was lost is sent again — it must be stored once.
 *
 * Outcomes go to the ledger: acknowledged with offsets; failed for certain ("write not applied": a
 * full disk; or the node could not be reached at all); unknown otherwise (timeouts, a crash of the
 * node the client talked to).
 */
import type { AppendAnswer, ForwardedAppend } from '../broker/partition-replicas.js';
import { noNode } from '../raft/index.js';
import type { HostSimContext, SimPartition } from './host-context.js';
import type { SimHostNode } from './host-node.js';
import type { Batch } from './partition-ledger.js';

/** How long a client waits for an answer before it counts the outcome as unknown (virtual ms). */
const clientTimeoutMs = 2500;
/** The deadline a forwarded append carries (node ms). */
const forwardDeadlineMs = 600;

interface Op {
  readonly client: number;
  readonly seq: number;
  readonly batch: Batch;
  readonly p: SimPartition;
  /** The node the client is talking to now, and its incarnation. */
  node: SimHostNode;
  inc: number;
  done: boolean;
  /** The ops of one multi-partition request still open: the client's next step waits for all. */
  request?: { left: number };
}

export class Clients {
  readonly #ctx: HostSimContext;
  readonly #count: number;
  readonly #ops = new Map<number, Op>();
  #seq = 0;

  constructor(ctx: HostSimContext, count: number) {
    this.#ctx = ctx;
    this.#count = count;
  }

  start(): void {
    for (let c = 0; c < this.#count; c++) this.#ctx.at(this.#ctx.rng.between(20, 200), () => this.#step(c));
  }

  /** Whether any client still waits for an answer. */
  get busy(): boolean {
    return this.#ops.size > 0;
  }

  /** The node crashed: whatever a client was waiting for there has an unknown outcome. */
  nodeCrashed(node: SimHostNode): void {
    for (const op of [...this.#ops.values()]) if (op.node === node) this.#finish(op, 'unknown', 'node crashed');
  }

  #step(client: number): void {
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
    const op: Op = { client, seq, batch, p, node, inc: node.incarnation, done: false };
    this.#ops.set(seq, op);
    ctx.at(clientTimeoutMs, () => this.#finish(op, 'unknown', 'client timeout'));
    if (!node.running || node.replicas === undefined) {
      // Connection refused: nothing was sent anywhere.
      ctx.log(`c${client} ${batch.id} p${p.index} -> n${node.id} refused (down)`);
      this.#finish(op, 'failed', 'node down');
      return;
    }
    if (r.chance(0.6)) {
      const others = ctx.partitions.filter((q) => q !== p);
      if (others.length > 0 && r.chance(0.4)) this.#appendMany(op, others);
      else this.#append(op);
    } else this.#forward(op, `r-${batch.id}`, 0);
  }

  /** One request with batches for `op`'s partition and one or two others, through op's node. */
  #appendMany(first: Op, others: readonly SimPartition[]): void {
    const ctx = this.#ctx;
    const r = ctx.rng;
    const request = { left: 1 };
    first.request = request;
    const ops: Op[] = [first];
    const pool = [...others];
    for (let n = r.between(1, Math.min(2, pool.length)); n > 0; n--) {
      const p = pool.splice(r.between(0, pool.length - 1), 1)[0]!;
      const seq = this.#seq++;
      const op: Op = { client: first.client, seq, batch: ctx.ledger.newBatch(`b${seq}`, p.index, r.between(1, 4)), p, node: first.node, inc: first.inc, done: false, request };
      request.left++;
      this.#ops.set(seq, op);
      ctx.at(clientTimeoutMs, () => this.#finish(op, 'unknown', 'client timeout'));
      ops.push(op);
    }
    ctx.log(`c${first.client} ${ops.map((o) => o.batch.id).join('+')} p${ops.map((o) => o.p.index).join('+')} append via n${first.node.id} in one request`);
    first.node
      .replicas!.append(ops.map((o) => ({ topic: o.p.topic, partition: o.p.partition, events: this.#events(o) })))
      .then((results) => {
        if (first.node.incarnation !== first.inc) return;
        if (results.length !== ops.length) throw new Error(`append answered ${results.length} results for ${ops.length} items`);
        ops.forEach((op, k) => this.#settle(op, results[k]!));
      })
      .catch((err: unknown) => ctx.fail(err));
  }

  #settle(op: Op, res: { ok: true; first: number; last: number } | { ok: false; error: Error }): void {
    if (op.done) return;
    if (res.ok) this.#ack(op, res.first, res.last);
    else if (res.error.name === 'KvWriteError') {
      this.#ctx.stats.refusedBatches++;
      this.#finish(op, 'failed', res.error.message);
    } else this.#finish(op, 'unknown', res.error.message);
  }

  #events(op: Op): Buffer[] {
    return op.batch.payloads.map((s) => Buffer.from(s));
  }

  #append(op: Op): void {
    const ctx = this.#ctx;
    ctx.log(`c${op.client} ${op.batch.id} p${op.p.index} append via n${op.node.id} (${op.batch.payloads.length} events)`);
    op.node
      .replicas!.append([{ topic: op.p.topic, partition: op.p.partition, events: this.#events(op) }])
      .then(([res]) => {
        if (op.done || op.node.incarnation !== op.inc) return;
        if (res === undefined) throw new Error('append answered nothing');
        if (res.ok) this.#ack(op, res.first, res.last);
        else if (res.error.name === 'KvWriteError') {
          ctx.stats.refusedBatches++;
          this.#finish(op, 'failed', res.error.message);
        }
        else this.#finish(op, 'unknown', res.error.message);
      })
      .catch((err: unknown) => ctx.fail(err));
  }

  #forward(op: Op, requestId: string, attempt: number): void {
    const ctx = this.#ctx;
    const node = op.node;
    if (!node.running || node.replicas === undefined) {
      this.#retry(op, requestId, attempt, noNode);
      return;
    }
    const inc = node.incarnation;
    op.inc = inc;
    const g = node.replicas.replica(op.p.topic, op.p.partition)?.group;
    const req: ForwardedAppend = {
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
    // Served as the node's transport serves a forwarded append (by the group's handler, if it hosts it).
    ctx
      .appendAt(node, 0, req)
      .then((a: AppendAnswer) => {
        if (op.done || node.incarnation !== inc) return;
        if (a.status === 'committed') this.#ack(op, a.firstOffset, a.lastOffset);
        else this.#retry(op, requestId, attempt, a.status === 'notLeader' ? a.leaderHint : noNode);
      })
      .catch((err: unknown) => ctx.fail(err));
  }

  /** Sends the same request id again, to the hinted leader or another node. */
  #retry(op: Op, requestId: string, attempt: number, hint: number): void {
    const ctx = this.#ctx;
    if (op.done) return;
    ctx.stats.retries++;
    ctx.at(ctx.rng.between(5, 40), () => {
      if (op.done) return;
      const next = hint !== noNode && ctx.rng.chance(0.8) ? ctx.node(hint) : ctx.node(ctx.rng.pick(op.p.replicas));
      op.node = next;
      this.#forward(op, requestId, attempt + 1);
    });
  }

  #ack(op: Op, first: number, last: number): void {
    this.#ctx.ledger.acked(op.batch, first, last);
    this.#finish(op, 'acked', `${first}..${last}`);
  }

  #finish(op: Op, outcome: 'acked' | 'failed' | 'unknown', why: string): void {
    if (op.done) return;
    op.done = true;
    this.#ops.delete(op.seq);
    const ctx = this.#ctx;
    if (outcome === 'acked') ctx.stats.batchesAcked++;
    else if (outcome === 'failed') {
      ctx.stats.batchesFailed++;
      ctx.ledger.failed(op.batch);
    } else {
      ctx.stats.batchesUnknown++;
      ctx.ledger.unknown(op.batch);
    }
    ctx.log(`c${op.client} ${op.batch.id} ${outcome} (${why})`);
    if (op.request !== undefined && --op.request.left > 0) return;
    ctx.at(ctx.rng.between(1, 30), () => this.#step(op.client));
  }
}
