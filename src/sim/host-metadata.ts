/**
 * Metadata clients of the host simulation: the metadata group runs on every node's production host
 * beside the partition groups (group 0, RaftMetadataGroup), and these clients use it as the HTTP
 * handlers do, through a random running node:
 *
 * - a write sets a register: event type `k<n>` whose value is its owning_application (a value no other
 *   write uses), proposed as `event_type.create` when the node does not know the event type yet and
 *   as `event_type.update` based on the node's copy otherwise, as the jepsen-like metadata test does.
 *   An answer `ok` completes the write; `ok: false` (it exists; it changed concurrently) means it was
 *   not applied; an error or no answer (a crash, the client's timeout) leaves its outcome unknown;
 * - a read waits for the node's ReadIndex barrier (readBarrier) and then reads its state machine; in
 *   a run with read leases, it reads as publishing does (publishBarrier): at once on a node that holds
 *   a lease (metadataLeaseReads counts those on followers), after a round on one that does not. As an
 *   HTTP handler, it reads in the barrier's continuation or up to 30 ms later (entries may apply in
 *   between), and its answer waits for answerBarrier (the onSend check of src/api/cluster-hooks.ts).
 *   `staleReads` skips the barrier: reads on followers may then miss acknowledged writes, which the
 *   linearizability check must catch (host.sim.test.ts shows it does).
 *
 * The history is checked for linearizability at the end of the run (linearizability.ts), and in every
 * calm the metadata group must take a write and every node converge on the same state.
 */
import type { MetadataCommand } from '../metadata/commands.js';
import type { EventType } from '../metadata/types.js';
import type { HostSimContext } from './host-context.js';
import type { SimHostNode } from './host-node.js';
import { checkLinearizable, type KvOp } from './linearizability.js';
import { InvariantViolation } from './invariants.js';

/** How long a client waits for an answer before it counts the outcome as unknown (virtual ms). */
const clientTimeoutMs = 2500;

interface Op {
  readonly client: number;
  readonly kind: 'write' | 'read';
  readonly key: string;
  /** The value written, or the value read once the read is answered. */
  value: string | undefined;
  readonly invoke: number;
  readonly node: SimHostNode;
  readonly inc: number;
  done: boolean;
  /** A scripted client's operation (probe): what runs when it ends, instead of the client's next random step. */
  readonly then?: (outcome: 'ok' | 'refused' | 'unknown', value: string | undefined) => void;
  /** A write: the index its entry took, once a node applied it (LeaseHolderBehind checks its acknowledgement). */
  appliedAt?: number;
  /** A write followed for LeaseHolderBehind: its key in #writes (its updated_at). */
  followedAs?: string;
}

export function eventTypeFor(name: string, owner: string, updatedAt: string): EventType {
  return {
    name,
    owning_application: owner,
    category: 'undefined',
    enrichment_strategies: [],
    partition_strategy: 'random',
    compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: '2026-01-01T00:00:00Z' },
    created_at: '2026-01-01T00:00:00Z',
    updated_at: updatedAt,
  } as unknown as EventType;
}

export class MetadataClients {
  readonly #ctx: HostSimContext;
  readonly #count: number;
  readonly #keys: readonly string[];
  readonly #staleReads: boolean;
  readonly #leaseReads: boolean;
  readonly #ruleChecks: boolean;
  readonly #ops = new Set<Op>();
  /** Writes under way by their updated_at (unique per write): applied() finds their index. */
  readonly #writes = new Map<string, Op>();
  readonly #history: KvOp[] = [];
  /** Positions of invocations and responses in one order (the order in which the simulation runs them). */
  #pos = 0;
  #seq = 0;

  constructor(ctx: HostSimContext, count: number, keys: number, staleReads: boolean, leaseReads = false, ruleChecks = true) {
    this.#leaseReads = leaseReads;
    this.#ruleChecks = ruleChecks;
    this.#ctx = ctx;
    this.#count = count;
    this.#keys = Array.from({ length: keys }, (_, i) => `k${i}`);
    this.#staleReads = staleReads;
  }

  start(): void {
    for (let c = 0; c < this.#count; c++) this.#ctx.at(this.#ctx.rng.between(20, 200), () => this.#step(c));
  }

  get busy(): boolean {
    return this.#ops.size > 0;
  }

  /** The node crashed: what a client waited for there has an unknown outcome (a read: none). */
  nodeCrashed(node: SimHostNode): void {
    for (const op of [...this.#ops]) if (op.node === node) this.#finish(op, 'unknown', 'node crashed');
  }

  /** A node applied `cmd` at `index` (its entry's index: what the node's state now shows). */
  applied(cmd: MetadataCommand, index: number): void {
    if (cmd.op !== 'event_type.create' && cmd.op !== 'event_type.update') return;
    const op = this.#writes.get(cmd.eventType.updated_at);
    if (op !== undefined && op.appliedAt === undefined) op.appliedAt = index;
  }

  /** The whole history is linearizable (throws InvariantViolation otherwise). */
  check(): void {
    const r = checkLinearizable(this.#history);
    if (!r.ok) {
      const ops = this.#history.filter((o) => o.key === r.badKey).sort((a, b) => a.invoke - b.invoke);
      const shown = ops.map((o) => `c${o.client} ${o.kind} ${o.value ?? '-'} [${o.invoke}, ${o.complete}]`).join('; ');
      throw new InvariantViolation('MetadataLinearizable', `metadata register ${r.badKey} has no linearization: ${shown}`);
    }
  }

  get history(): readonly KvOp[] {
    return this.#history;
  }

  #step(client: number): void {
    const ctx = this.#ctx;
    const r = ctx.rng;
    if (!ctx.chaos) {
      ctx.at(r.between(50, 150), () => this.#step(client));
      return;
    }
    const node = r.pick(ctx.nodes());
    const key = r.pick(this.#keys);
    if (!node.running || node.metadata === undefined) {
      // Connection refused: nothing was asked.
      ctx.at(r.between(5, 40), () => this.#step(client));
      return;
    }
    if (r.chance(0.5)) this.#write(client, node, key);
    else this.#read(client, node, key);
  }

  /**
   * One operation of a scripted client (host-lease-probe.ts) on `node`, recorded in the history as
   * any other; `then` runs when it ends (at once, with 'unknown', when the node cannot take it).
   */
  probe(client: number, kind: 'write' | 'read', node: SimHostNode, key: string, then: (outcome: 'ok' | 'refused' | 'unknown', value: string | undefined) => void): void {
    if (!node.running || node.metadata === undefined) return then('unknown', undefined);
    if (kind === 'write') this.#write(client, node, key, then);
    else this.#read(client, node, key, then);
  }

  #write(client: number, node: SimHostNode, key: string, then?: Op['then']): void {
    const ctx = this.#ctx;
    const md = node.metadata!;
    const seq = this.#seq++;
    const value = `c${client}.${seq}`;
    const op: Op = { client, kind: 'write', key, value, invoke: this.#pos++, node, inc: node.incarnation, done: false, then };
    this.#ops.add(op);
    ctx.stats.metadataWrites++;
    // Unique, so that an update based on an older copy is refused as concurrent.
    const updatedAt = `2026-01-01T00:00:00.${String(seq).padStart(9, '0')}Z`;
    if (this.#leaseReads && this.#ruleChecks) {
      op.followedAs = updatedAt;
      this.#writes.set(updatedAt, op);
    }
    const rec = md.state.eventType(key);
    const cmd: MetadataCommand =
      rec === undefined
        ? { op: 'event_type.create', eventType: eventTypeFor(key, value, updatedAt), partitionCount: 1 }
        : { op: 'event_type.update', eventType: { ...rec.eventType, owning_application: value, updated_at: updatedAt }, basedOnUpdatedAt: rec.eventType.updated_at, schemaChanged: false };
    ctx.log(`mc${client} ${cmd.op} ${key}=${value} via n${node.id}`);
    ctx.at(clientTimeoutMs, () => this.#finish(op, 'unknown', 'client timeout'));
    md.propose(cmd).then(
      (res) => {
        if (op.done || node.incarnation !== op.inc) return;
        // Acknowledged: every lease holder has applied it (metadata-lease.ts mayAcknowledge).
        if (res.ok && op.appliedAt !== undefined) this.#checkShown(node, op.appliedAt, 'acknowledged a write');
        this.#finish(op, res.ok ? 'ok' : 'refused', res.ok ? 'applied' : res.reason);
      },
      (err: unknown) => {
        if (op.done || node.incarnation !== op.inc) return;
        this.#finish(op, 'unknown', err instanceof Error ? err.message : String(err));
      },
    );
  }

  #read(client: number, node: SimHostNode, key: string, then?: Op['then']): void {
    const ctx = this.#ctx;
    const md = node.metadata!;
    const op: Op = { client, kind: 'read', key, value: undefined, invoke: this.#pos++, node, inc: node.incarnation, done: false, then };
    this.#ops.add(op);
    ctx.stats.metadataReads++;
    ctx.at(clientTimeoutMs, () => this.#finish(op, 'unknown', 'client timeout'));
    // With read leases, as publishing reads: under the node's lease when it holds one.
    const barrier = this.#staleReads ? undefined : this.#leaseReads ? md.publishBarrier() : md.readBarrier();
    if (this.#leaseReads && barrier === undefined && !md.isLeader()) ctx.stats.metadataLeaseReads++;
    // Served at once: what the node applied must be released now (metadata-leases.ts read()).
    if (this.#leaseReads && barrier === undefined) this.#checkShown(node, md.lastChange, 'served a read at once');
    const failed = (err: unknown) => {
      if (op.done || node.incarnation !== op.inc) return;
      this.#finish(op, 'unknown', err instanceof Error ? err.message : String(err));
    };
    // As an HTTP handler reads: after the barrier, sometimes at once, sometimes after the host ran
    // turns (a hook's continuation, a handler's own awaits), so entries may apply in between; and the
    // answer leaves once what the node applied is released (answerBarrier, the HTTP layer's onSend).
    const readNow = () => {
      if (op.done || node.incarnation !== op.inc) return;
      op.value = md.state.eventType(key)?.eventType.owning_application;
      const shows = md.lastChange;
      const answered = () => {
        if (op.done || node.incarnation !== op.inc) return;
        if (this.#leaseReads && !this.#staleReads) this.#checkShown(node, shows, 'answered a read');
        this.#finish(op, 'ok', `read ${op.value ?? '-'}`);
      };
      const hold = this.#staleReads ? undefined : md.answerBarrier();
      if (hold === undefined) answered();
      else hold.then(answered, failed);
    };
    (barrier ?? Promise.resolve()).then(() => {
      if (op.done || node.incarnation !== op.inc) return;
      if (ctx.rng.chance(0.5)) readNow();
      else ctx.at(ctx.rng.between(1, 30), readNow, node, op.inc);
    }, failed);
  }

  /**
   * LeaseHolderBehind (a rule check, with read leases): when `node` shows its state up to index
   * `shows` (the last entry that changed it), no other node may hold a read lease under which it
   * would serve a state without that entry: every node that holds one (by its own clock, as it
   * decides) has applied `shows`, or its lease names an index at or above it (it applies that first).
   * That is what "released" promises (metadata-lease.ts); the linearizability check sees a broken
   * promise only when a read then lands on the lagging holder within its window, which random
   * clients seldom make; this sees it wherever anything is shown.
   */
  #checkShown(node: SimHostNode, shows: number, what: string): void {
    if (!this.#ruleChecks) return;
    for (const m of this.#ctx.running()) {
      const md = m.metadata;
      if (m === node || md === undefined) continue;
      const lease = md.heldLease();
      const applied = md.raftGroup.applied;
      if (lease === undefined || lease >= shows || applied >= shows) continue;
      this.#ctx.fail(new InvariantViolation('LeaseHolderBehind', `n${node.id} ${what} showing metadata index ${shows}, while n${m.id} holds a read lease (index ${lease}) and applied only ${applied}`));
      return;
    }
  }

  /**
   * Records the outcome: a completed operation with its response position; a write of unknown
   * outcome as never completing (it may take effect at any point after its invocation, or never); a
   * refused write, and a read without an answer, not at all (they had no effect).
   */
  #finish(op: Op, outcome: 'ok' | 'refused' | 'unknown', why: string): void {
    if (op.done) return;
    op.done = true;
    this.#ops.delete(op);
    if (op.followedAs !== undefined) this.#writes.delete(op.followedAs);
    const ctx = this.#ctx;
    if (outcome === 'ok') {
      this.#history.push({ client: op.client, kind: op.kind, key: op.key, value: op.value, invoke: op.invoke, complete: this.#pos++ });
      if (op.kind === 'write') ctx.stats.metadataAcked++;
    } else if (outcome === 'unknown' && op.kind === 'write') {
      this.#history.push({ client: op.client, kind: 'write', key: op.key, value: op.value, invoke: op.invoke, complete: Infinity });
    }
    ctx.log(`mc${op.client} ${op.kind} ${op.key} ${outcome} (${why})`);
    if (op.then !== undefined) op.then(outcome, op.value);
    else ctx.at(ctx.rng.between(1, 30), () => this.#step(op.client));
  }
}
