/**
 * Routes what the transport receives to the group it names. Each group (the metadata group, every
 * partition group hosted here) registers its handler; traffic for a group this node does not host is
 * dropped, which is normal for a moment around placement changes (a leader may reach a new replica
 * before the replica has applied the metadata that creates its group), so the log line for it is rate
 * limited rather than one per message.
 */
import type { Message, NodeId } from '../raft/index.js';
import {
  metadataGroup,
  TransportError,
  type AppendAnswer,
  type AppendRequest,
  type BoundsAnswer,
  type BoundsRequest,
  type ControlAnswer,
  type ControlRequest,
  type FetchLogRequest,
  type ForwardAnswer,
  type ForwardedProposal,
  type GroupHandler,
  type GroupId,
  type LogChunk,
  type NodeHandler,
  type ReadChunk,
  type ReadRequest,
  type TransportLogger,
} from './types.js';

export interface DispatcherOptions {
  readonly logger: TransportLogger;
  /** Told of every batch from a peer (the node's Raft host: node liveness for quiesced groups). */
  readonly heard?: (peer: NodeId, incarnation: string) => void;
  /** At most one log line per this interval about traffic for unknown groups. */
  readonly unknownLogIntervalMs?: number;
  readonly nowMs?: () => number;
}

export class GroupDispatcher implements NodeHandler {
  readonly #groups = new Map<GroupId, GroupHandler>();
  readonly #logger: TransportLogger;
  readonly #intervalMs: number;
  readonly #nowMs: () => number;
  readonly #heard: ((peer: NodeId, incarnation: string) => void) | undefined;
  #unknownTotal = 0;
  #unknownSinceLog = 0;
  #lastLogMs = -Infinity;

  constructor(opts: DispatcherOptions) {
    this.#logger = opts.logger;
    this.#intervalMs = opts.unknownLogIntervalMs ?? 10_000;
    this.#nowMs = opts.nowMs ?? Date.now;
    this.#heard = opts.heard;
  }

  heard(peer: NodeId, incarnation: string): void {
    this.#heard?.(peer, incarnation);
  }

  register(group: GroupId, handler: GroupHandler): void {
    if (this.#groups.has(group)) throw new Error(`group ${group} is already registered`);
    this.#groups.set(group, handler);
  }

  unregister(group: GroupId): void {
    this.#groups.delete(group);
  }

  has(group: GroupId): boolean {
    return this.#groups.has(group);
  }

  /** Messages and requests dropped so far because their group is not hosted here. */
  droppedForUnknownGroups(): number {
    return this.#unknownTotal;
  }

  #unknown(group: GroupId, from: NodeId, what: string): void {
    this.#unknownTotal++;
    this.#unknownSinceLog++;
    const now = this.#nowMs();
    if (now - this.#lastLogMs < this.#intervalMs) return;
    this.#logger.info({ group, from, what, dropped: this.#unknownSinceLog, droppedTotal: this.#unknownTotal }, 'dropped traffic for a group this node does not host');
    this.#lastLogMs = now;
    this.#unknownSinceLog = 0;
  }

  receive(group: GroupId, m: Message): void {
    const h = this.#groups.get(group);
    if (h === undefined) this.#unknown(group, m.from, m.type);
    else h.receive(m);
  }

  unreachable(peer: NodeId): void {
    for (const h of this.#groups.values()) h.unreachable(peer);
  }

  snapshotStatus(group: GroupId, peer: NodeId, delivered: boolean): void {
    this.#groups.get(group)?.snapshotStatus(peer, delivered);
  }

  propose(p: ForwardedProposal): Promise<ForwardAnswer> {
    const h = this.#groups.get(metadataGroup);
    if (h?.propose === undefined) return Promise.resolve({ status: 'unavailable', detail: 'the metadata group is not running on this node' });
    return h.propose(p);
  }

  append(from: NodeId, req: AppendRequest): Promise<AppendAnswer> {
    const h = this.#groups.get(req.group);
    if (h?.append === undefined) {
      this.#unknown(req.group, from, 'append');
      return Promise.resolve({ status: 'unavailable', detail: `group ${req.group} is not hosted on this node` });
    }
    return h.append(from, req);
  }

  control(from: NodeId, req: ControlRequest): Promise<ControlAnswer> {
    const h = this.#groups.get(req.group);
    if (h?.control === undefined) {
      this.#unknown(req.group, from, 'control');
      return Promise.resolve({ status: 'unavailable', detail: `group ${req.group} is not hosted on this node` });
    }
    return h.control(from, req);
  }

  read(from: NodeId, req: ReadRequest, signal: AbortSignal): AsyncIterable<ReadChunk> {
    const h = this.#groups.get(req.group);
    if (h?.read === undefined) {
      this.#unknown(req.group, from, 'read');
      throw new TransportError('unavailable', `group ${req.group} is not hosted on this node`);
    }
    return h.read(from, req, signal);
  }

  bounds(from: NodeId, req: BoundsRequest): Promise<BoundsAnswer> {
    const h = this.#groups.get(req.group);
    if (h?.bounds === undefined) {
      this.#unknown(req.group, from, 'bounds');
      return Promise.reject(new TransportError('unavailable', `group ${req.group} is not hosted on this node`));
    }
    return h.bounds(from, req);
  }

  fetchLog(from: NodeId, req: FetchLogRequest, signal: AbortSignal): AsyncIterable<LogChunk> {
    const h = this.#groups.get(req.group);
    if (h?.fetchLog === undefined) {
      this.#unknown(req.group, from, 'fetchLog');
      throw new TransportError('unavailable', `group ${req.group} is not hosted on this node`);
    }
    return h.fetchLog(from, req, signal);
  }
}
