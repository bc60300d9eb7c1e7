/**
 * Partitions this node holds no voter of (held elsewhere, or here as a learner that may lack what is
 * committed): their bounds as a replica last told them, refreshed in the background, and reads and
 * waits over the transport from a replica, the one that answered last first. And the other side: a
 * replica here serving such a read for another node.
 */
import type { Offset } from '../core/offset.js';
import { PartitionUnavailableError } from '../log/index.js';
import { noNode, type NodeId, type Term } from '../raft/index.js';
import type { PartitionReplica, StoredEventView } from './partition-replica.js';
import { replicaKey, type ReplicasContext } from './partition-replicas-context.js';
import type { RemoteReadChunk, RemoteReadRequest } from './partition-replicas-types.js';
import { RemoteReadAhead } from './remote-read-ahead.js';
import { answeredLastFirst } from './replica-peers.js';

/** Bounds of a partition this node holds no replica of, as a replica last told them. */
export interface RemoteBounds {
  oldest: number;
  newest: number;
  atMs: number;
  refreshing: boolean;
  /** The replica that answered last (tried first next time). */
  from: NodeId;
  /** The leader that replica named. */
  leader: { id: NodeId; term: Term } | undefined;
}

/** How old remote bounds may get before a read of them asks a replica again. */
const remoteBoundsMaxAgeMs = 500;
/** How long a fresh ask of bounds waits for a replica before the cached bounds are taken (freshen). */
export const freshBoundsWaitMs = 500;
/** How long a remote wait for new events lasts before it is asked again. */
const remoteWaitMs = 1000;
/**
 * Events a remote read asks a replica for at least (within the caller's byte bound), the rest kept for
 * the next reads (remote-read-ahead.ts), and what is kept for all partitions together.
 */
const remoteReadAheadEvents = 1000;
const remoteReadAheadBytesMax = 16 * 1024 * 1024;
const remoteReadAheadRuns = 4;

/** A read of a partition this node can read from no replica. */
export function noReplicaHere(topic: number, partition: number): never {
  throw new PartitionUnavailableError(topic, partition, new Error('this node holds no replica of the partition'));
}

export class PartitionRemoteReads {
  readonly #c: ReplicasContext;
  readonly #bounds = new Map<string, RemoteBounds>();
  /** Partitions held elsewhere whose replicas have not answered yet (refreshAll asks again). */
  readonly #unanswered = new Set<string>();
  /** Events read from replicas beyond what was asked, for the next reads. */
  readonly #ahead = new RemoteReadAhead({ bytesMax: remoteReadAheadBytesMax, runsPerPartition: remoteReadAheadRuns });
  /** Reads sent to replicas (a test counts them). */
  remoteReadsSent = 0;

  constructor(c: ReplicasContext) {
    this.#c = c;
  }

  /** Whether bounds of the partition are known here (asked once at least). */
  known(topic: number, partition: number): boolean {
    return this.#bounds.has(replicaKey(topic, partition));
  }

  /** The bounds a replica told of each partition held elsewhere, by replicaKey. */
  entries(): IterableIterator<[string, RemoteBounds]> {
    return this.#bounds.entries();
  }

  /**
   * The bounds a replica told last (refreshed in the background when older than
   * remoteBoundsMaxAgeMs), so they may trail the replicas' by about that much.
   */
  cachedBounds(topic: number, partition: number): { oldest: Offset; newest: Offset } {
    const c = this.#bounds.get(replicaKey(topic, partition));
    if (c === undefined || this.#c.o.clock.monotonicMs() - c.atMs > remoteBoundsMaxAgeMs) this.refresh(topic, partition);
    return c === undefined ? { oldest: 0 as Offset, newest: -1 as Offset } : { oldest: c.oldest as Offset, newest: c.newest as Offset };
  }

  /** Long-polls a replica (one event is enough to know there is news), at most remoteWaitMs per ask. */
  async waitForNews(topic: number, partition: number, after: Offset): Promise<void> {
    const known = this.#bounds.get(replicaKey(topic, partition));
    if (known !== undefined && known.newest > after) return;
    try {
      await this.read(topic, partition, after, 1, 1, remoteWaitMs);
    } catch {
      await this.#c.sleep(Math.min(remoteWaitMs, 200));
    }
  }

  /** The replicas to ask for a partition this node does not hold, the one that answered last first. */
  targets(topic: number, partition: number): { group: number; targets: NodeId[] } | undefined {
    const p = this.#c.o.placement(topic, partition);
    if (p === undefined) return undefined;
    const last = this.#bounds.get(replicaKey(topic, partition))?.from;
    return { group: p.group, targets: answeredLastFirst(this.#c.otherNodes(p.replicas), last) };
  }

  #note(topic: number, partition: number, from: NodeId, oldest: number, newest: number, leader?: { id: NodeId; term: Term }): void {
    const key = replicaKey(topic, partition);
    const cur = this.#bounds.get(key);
    this.#bounds.set(key, { oldest, newest: Math.max(newest, cur?.newest ?? -1), atMs: this.#c.o.clock.monotonicMs(), refreshing: false, from, leader: leader ?? cur?.leader });
  }

  /** Refreshes the bounds of every partition held elsewhere that this node has looked at (periodic). */
  refreshAll(): void {
    for (const key of new Set([...this.#bounds.keys(), ...this.#unanswered])) {
      const [topic, partition] = key.split(':').map(Number) as [number, number];
      // Gone, or held here as a voter now (a move promoted this node): nothing to refresh.
      if (this.#c.o.placement(topic, partition) === undefined || !this.#c.isRemote(topic, partition)) {
        this.#bounds.delete(key);
        this.#unanswered.delete(key);
        this.#ahead.drop(key);
      } else this.refresh(topic, partition);
    }
  }

  /**
   * What the partition's other replicas say is its newest applied offset, each asked at once and
   * given at most `timeoutMs`: the highest answer, and how many there were to ask.
   */
  async newestElsewhere(topic: number, partition: number, timeoutMs = 1000): Promise<{ asked: number; newest: number | undefined }> {
    const where = this.targets(topic, partition);
    const ask = this.#c.forwarder?.bounds?.bind(this.#c.forwarder);
    if (where === undefined || ask === undefined || where.targets.length === 0) return { asked: 0, newest: undefined };
    const answers = await Promise.all(
      where.targets.map(async (to) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, timeoutMs, undefined)));
        try {
          return await Promise.race([ask(to, { group: where.group, topic, partition }).then((b) => b.newest, () => undefined), late]);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const got = answers.filter((n): n is number => n !== undefined);
    return { asked: where.targets.length, newest: got.length === 0 ? undefined : Math.max(...got) };
  }

  /**
   * Asks the leader a replica named last (then the other replicas, in turn) for the bounds now, so
   * that a client that published on another node and then asks this one sees its events: resolves
   * once one answered (cachedBounds() has it then), or after `waitMs` with the cache as it was.
   */
  async freshen(topic: number, partition: number, waitMs = freshBoundsWaitMs): Promise<void> {
    const where = this.targets(topic, partition);
    const ask = this.#c.forwarder?.bounds?.bind(this.#c.forwarder);
    if (where === undefined || ask === undefined || where.targets.length === 0) return;
    const leader = this.#bounds.get(replicaKey(topic, partition))?.leader?.id;
    const order = leader !== undefined && where.targets.includes(leader) ? [leader, ...where.targets.filter((n) => n !== leader)] : where.targets;
    const asking = (async () => {
      for (const to of order) {
        try {
          const b = await ask(to, { group: where.group, topic, partition });
          this.#note(topic, partition, to, b.oldest, b.newest, b.leader === noNode ? undefined : { id: b.leader, term: b.epoch });
          this.#unanswered.delete(replicaKey(topic, partition));
          return;
        } catch {
          // the next replica
        }
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    try {
      await Promise.race([asking, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks a replica for the bounds (in the background; bounds() answers from the cache meanwhile). */
  refresh(topic: number, partition: number): void {
    const key = replicaKey(topic, partition);
    const cur = this.#bounds.get(key);
    if (cur?.refreshing === true || this.#c.forwarder?.bounds === undefined) return;
    const where = this.targets(topic, partition);
    if (where === undefined) return;
    if (cur !== undefined) cur.refreshing = true;
    const bounds = this.#c.forwarder.bounds.bind(this.#c.forwarder);
    void (async () => {
      for (const to of where.targets) {
        try {
          const b = await bounds(to, { group: where.group, topic, partition });
          this.#note(topic, partition, to, b.oldest, b.newest, b.leader === noNode ? undefined : { id: b.leader, term: b.epoch });
          this.#unanswered.delete(key);
          return;
        } catch {
          // the next replica
        }
      }
      const c = this.#bounds.get(key);
      if (c !== undefined) c.refreshing = false;
      // No replica answered the first ask (they may not have opened the new partition yet): the periodic
      // refresh asks again, or this node would name no leader for it until a request touched it.
      else this.#unanswered.add(key);
    })();
  }

  /**
   * Events after `after` from a replica: from the events an earlier read brought beyond what it asked
   * for when they hold the next one, else read (a read that does not wait asks for at least
   * remoteReadAheadEvents, within `maxBytes`, and keeps the rest).
   */
  async read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number, waitMs: number): Promise<StoredEventView[]> {
    const key = replicaKey(topic, partition);
    const kept = this.#ahead.take(key, after, maxEvents, maxBytes);
    if (kept !== undefined) return kept;
    const events = await this.#readRemote(topic, partition, after, waitMs === 0 ? Math.max(maxEvents, remoteReadAheadEvents) : maxEvents, maxBytes, waitMs);
    if (events.length <= maxEvents) return events;
    this.#ahead.put(key, after, events);
    return events.slice(0, maxEvents);
  }

  async #readRemote(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number, waitMs: number): Promise<StoredEventView[]> {
    const where = this.targets(topic, partition);
    if (where === undefined || this.#c.forwarder?.read === undefined) noReplicaHere(topic, partition);
    let lastErr: unknown;
    for (const to of where.targets) {
      this.remoteReadsSent++;
      const ac = new AbortController();
      try {
        // A read without `follow` is one answer (on the wire one chunk per run of dense offsets), then
        // the end of the call: the call is read to its end, not left after the first chunk. Left, it
        // was cancelled (an HTTP/2 RST_STREAM), one per read, and the replica's HTTP/2 server takes a
        // burst of about a thousand resets for an attack and closes the connection
        // (docs/replication.md, "Any node serves any request").
        let last: RemoteReadChunk | undefined;
        const events: StoredEventView[] = [];
        for await (const chunk of this.#c.forwarder.read(to, { group: where.group, topic, partition, afterOffset: after, maxEvents, maxBytes, waitMs, follow: false, flowId: '' }, ac.signal)) {
          for (const e of chunk.events) events.push({ offset: e.offset as Offset, bytes: e.bytes });
          last = chunk;
        }
        if (last !== undefined) this.#note(topic, partition, to, last.oldest, last.newest);
        return events;
      } catch (err) {
        lastErr = err;
      } finally {
        ac.abort();
      }
    }
    throw new PartitionUnavailableError(topic, partition, new Error(`no replica could be read: ${(lastErr as Error | undefined)?.message ?? 'none reachable'}`));
  }

  /**
   * A read for a node that holds no replica: waits up to `waitMs` for events after the cursor, then
   * answers what this replica applied (committed events only), once or, with `follow`, until the
   * caller cancels. Chunks are produced only as the transport takes them.
   */
  async *serve(r: PartitionReplica, req: RemoteReadRequest, signal: AbortSignal): AsyncIterable<RemoteReadChunk> {
    let after = req.afterOffset as Offset;
    do {
      if (req.waitMs > 0 && r.bounds().newest <= after) {
        const wait = AbortSignal.any([signal, this.#c.o.timeout?.(req.waitMs) ?? AbortSignal.timeout(req.waitMs)]);
        await r.waitForEvents(after, wait);
      }
      if (signal.aborted) return;
      const b = r.bounds();
      const events = b.newest > after ? await r.read(after, req.maxEvents, req.maxBytes) : [];
      const last = events[events.length - 1];
      if (last !== undefined) after = last.offset;
      yield { events, oldest: b.oldest, newest: Math.max(b.newest, last?.offset ?? -1), epoch: r.group.term };
    } while (req.follow && !signal.aborted);
  }
}
