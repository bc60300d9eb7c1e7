/**
 * A timeline switch from any node (docs/decisions.md "Storages and timelines"), as commands of the
 * metadata group and of the partition groups, so that it holds on one node and on many alike:
 *
 *   1. `timeline.prepare` records the switch to timeline T as the event type's one pending switch and
 *      allocates the new log's groups (a second switch meanwhile is refused: 409);
 *   2. every partition of the current timeline is sealed for T in its own group, through its leader
 *      (partition-control.ts). The seal is ordered in the partition's log like any batch: batches
 *      before it keep their offsets, batches after it are not stored and come back `sealed` to their
 *      node, which waits for step 3 and sends them to the new timeline (storage-router.ts). The seal
 *      answers the log's next offset N_p;
 *   3. `timeline.commit` makes T current with starts N_p; each node opens the new groups, which start
 *      at N_p (GroupPlacement.start), so offsets stay dense across the boundary.
 *
 * Every step is idempotent for the same T (prepare again: recorded; seal again: the same N_p; commit
 * again: the same timeline), so a switch whose node died after step 1 or 2 is finished by any node
 * that runs the steps again with T: a node whose batch waited too long on a sealed log, and the
 * metadata leader for a switch that stays pending (finishPending). Nothing else can move a sealed log:
 * only the pending switch seals, and a log sealed for T refuses a seal for any other.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/ports.js';
import { problems } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { PlacementProposal } from '../metadata/placement-types.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import { timelinesOf } from '../metadata/timelines.js';
import type { EventTypeRecord, TimelineRecord } from '../metadata/types.js';
import { PartitionUnavailableError } from '../log/index.js';
import { SealConflictError } from './partition-control.js';

export interface SwitchState {
  eventType(name: string): EventTypeRecord | undefined;
  eventTypes(): Iterable<EventTypeRecord>;
}

export interface TimelineSwitcherOptions {
  readonly state: () => SwitchState;
  readonly propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
  /** Seals a partition of a timeline's log for the switch to `switchTo` (StorageRouter.sealLog). */
  readonly seal: (t: TimelineRecord, partition: number, switchTo: string, deadlineMs: number) => Promise<number>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long the seals of one attempt may take. */
  readonly sealTimeoutMs: number;
  /** A switch pending for longer than this (seen by finishPending) is finished by the caller. */
  readonly staleAfterMs: number;
}

export class TimelineSwitcher {
  readonly #o: TimelineSwitcherOptions;
  /** Completions running on this node, by event type and timeline: one at a time for each. */
  readonly #running = new Map<string, Promise<TimelineRecord>>();
  /** When this node first saw each pending switch (by timeline id), on its monotonic clock. */
  readonly #seen = new Map<string, number>();

  constructor(o: TimelineSwitcherOptions) {
    this.#o = o;
  }

  /** Switches the event type's new writes to a new timeline `id` on `storageId`; answers it once committed. */
  async switchTo(name: string, id: string, storageId: string, placement: PlacementProposal | undefined): Promise<TimelineRecord> {
    const cmd: MetadataCommand = { op: 'timeline.prepare', eventType: name, id, storage_id: storageId, at: new Date(this.#o.clock.nowMs()).toISOString() };
    if (placement !== undefined) cmd.placement = placement;
    const r = await this.#o.propose(cmd);
    if (!r.ok) throw failure(r);
    return this.complete(name, id);
  }

  /** Runs the seals and the commit of the pending switch `id` (again); harmless if it is done. */
  complete(name: string, id: string): Promise<TimelineRecord> {
    const key = `${name}\n${id}`;
    let p = this.#running.get(key);
    if (p === undefined) {
      p = this.#complete(name, id).finally(() => this.#running.delete(key));
      this.#running.set(key, p);
    }
    return p;
  }

  async #complete(name: string, id: string): Promise<TimelineRecord> {
    const rec = this.#o.state().eventType(name);
    if (rec === undefined) throw problems.eventTypeNotFound(`EventType "${name}" does not exist.`);
    const tls = timelinesOf(rec);
    const cur = tls[tls.length - 1]!;
    if (cur.id === id) return cur;
    if (rec.storage.pendingTimeline?.id !== id) throw problems.conflict(`No switch of event type "${name}" to timeline ${id} is pending`);
    const deadlineMs = this.#o.clock.monotonicMs() + this.#o.sealTimeoutMs;
    let starts: number[];
    try {
      starts = await Promise.all(rec.storage.partitions.map((_, p) => this.#o.seal(cur, p, id, deadlineMs)));
    } catch (err) {
      if (err instanceof SealConflictError) throw problems.conflict(`Partition ${err.partition} of "${name}" was sealed for timeline ${err.sealedFor}, not ${id}`);
      if (err instanceof PartitionUnavailableError) {
        throw problems.unavailable(`The switch of "${name}" to timeline ${id} could not seal every partition (${err.cause.message}); it stays pending and is finished once they are reachable`);
      }
      throw err;
    }
    const r = await this.#o.propose({ op: 'timeline.commit', eventType: name, id, starts, at: new Date(this.#o.clock.nowMs()).toISOString() });
    if (!r.ok) throw failure(r);
    if (r.timeline === undefined) throw problems.internal('timeline.commit applied without a timeline');
    this.#o.logger.info({ eventType: name, timeline: id, order: r.timeline.order, storage: r.timeline.storage_id, starts }, 'timeline switched');
    return r.timeline;
  }

  /**
   * Finishes the switch to `timeline` of the event type whose logical topic this is (a batch waited
   * long on one of its sealed logs). Errors are logged: the batch's own wait decides its answer.
   */
  finishStuck(topic: number, timeline: string): void {
    const rec = [...this.#o.state().eventTypes()].find((r) => r.storage.topic === topic);
    if (rec === undefined || rec.storage.pendingTimeline?.id !== timeline) return;
    this.#finish(rec.eventType.name, timeline, 'a batch waited long on a sealed log');
  }

  /**
   * Finishes every switch this node has seen pending for longer than staleAfterMs (called by the
   * metadata leader on a timer: the node that began the switch may be gone).
   */
  finishPending(): void {
    const now = this.#o.clock.monotonicMs();
    const pending = new Set<string>();
    for (const rec of this.#o.state().eventTypes()) {
      const p = rec.storage.pendingTimeline;
      if (p === undefined) continue;
      pending.add(p.id);
      const since = this.#seen.get(p.id) ?? now;
      this.#seen.set(p.id, since);
      if (now - since >= this.#o.staleAfterMs) this.#finish(rec.eventType.name, p.id, `pending for ${Math.round(now - since)} ms`);
    }
    for (const id of this.#seen.keys()) if (!pending.has(id)) this.#seen.delete(id);
  }

  #finish(name: string, id: string, why: string): void {
    if (this.#running.has(`${name}\n${id}`)) return;
    this.#o.logger.warn({ eventType: name, timeline: id, why }, 'finishing a timeline switch begun elsewhere');
    this.complete(name, id).catch((err: unknown) => this.#o.logger.warn({ err, eventType: name, timeline: id }, 'finishing the timeline switch failed; retried later'));
  }
}

function failure(r: Extract<ApplyResult, { ok: false }>): Error {
  if (r.reason === 'not_found') return problems.eventTypeNotFound(r.detail);
  if (r.reason === 'conflict' || r.reason === 'exists') return problems.conflict(r.detail);
  return problems.unprocessable(r.detail);
}
