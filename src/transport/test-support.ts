/**
 * Helpers shared by the transport tests and the transport bench (imported by nothing else): a handler
 * that records what arrives and answers as told, and transports on loopback ports wired to each other.
 */
import type { Message, NodeId } from '../raft/index.js';
import { GrpcTransport, type TransportOptions } from './raft-transport.js';
import {
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
  type GroupId,
  type LogChunk,
  type NodeHandler,
  type ReadChunk,
  type ReadRequest,
} from './types.js';

export const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** The cluster secret test transports prove by default. */
export const testSecurity = { secret: Buffer.from('a test cluster secret, 32+ bytes long') } as const;

/** A logger that keeps what it was asked to log. */
export class RecordingLogger {
  lines: { level: string; obj: object; msg: string }[] = [];
  debug(obj: object, msg: string): void {
    this.lines.push({ level: 'debug', obj, msg });
  }
  info(obj: object, msg: string): void {
    this.lines.push({ level: 'info', obj, msg });
  }
  warn(obj: object, msg: string): void {
    this.lines.push({ level: 'warn', obj, msg });
  }
  error(obj: object, msg: string): void {
    this.lines.push({ level: 'error', obj, msg });
  }
}

/** Records everything; each service answers through a replaceable function. */
export class RecordingHandler implements NodeHandler {
  received: { group: GroupId; m: Message }[] = [];
  proposals: ForwardedProposal[] = [];
  appends: { from: NodeId; req: AppendRequest }[] = [];
  reads: { from: NodeId; req: ReadRequest }[] = [];
  fetches: { from: NodeId; req: FetchLogRequest }[] = [];
  boundsAsked: { from: NodeId; req: BoundsRequest }[] = [];
  controls: { from: NodeId; req: ControlRequest }[] = [];
  unreachables: NodeId[] = [];
  snapshots: [GroupId, NodeId, boolean][] = [];

  onPropose: (p: ForwardedProposal) => Promise<ForwardAnswer> = async () => ({ status: 'applied', index: 42, result: Buffer.from('{"ok":true}') });
  onAppend: (from: NodeId, req: AppendRequest) => Promise<AppendAnswer> = async (_from, req) => ({
    status: 'committed',
    epoch: req.epoch === 0 ? 1 : req.epoch,
    firstOffset: 0,
    lastOffset: req.events.length - 1,
  });
  onControl: (from: NodeId, req: ControlRequest) => Promise<ControlAnswer> = async (_from, req) => ({ status: 'applied', epoch: req.epoch === 0 ? 1 : req.epoch, next: 0 });
  onRead: (from: NodeId, req: ReadRequest, signal: AbortSignal) => AsyncIterable<ReadChunk> = () => {
    throw new TransportError('unavailable', 'no reads here');
  };
  onBounds: (from: NodeId, req: BoundsRequest) => Promise<BoundsAnswer> = async () => ({ oldest: 0, newest: -1, epoch: 1, leader: 0 });
  onFetchLog: (from: NodeId, req: FetchLogRequest, signal: AbortSignal) => AsyncIterable<LogChunk> = () => {
    throw new TransportError('unavailable', 'no log here');
  };

  receive(group: GroupId, m: Message): void {
    this.received.push({ group, m });
  }
  unreachable(peer: NodeId): void {
    this.unreachables.push(peer);
  }
  snapshotStatus(group: GroupId, peer: NodeId, delivered: boolean): void {
    this.snapshots.push([group, peer, delivered]);
  }
  propose(p: ForwardedProposal): Promise<ForwardAnswer> {
    this.proposals.push(p);
    return this.onPropose(p);
  }
  append(from: NodeId, req: AppendRequest): Promise<AppendAnswer> {
    this.appends.push({ from, req });
    return this.onAppend(from, req);
  }
  control(from: NodeId, req: ControlRequest): Promise<ControlAnswer> {
    this.controls.push({ from, req });
    return this.onControl(from, req);
  }
  read(from: NodeId, req: ReadRequest, signal: AbortSignal): AsyncIterable<ReadChunk> {
    this.reads.push({ from, req });
    return this.onRead(from, req, signal);
  }
  bounds(from: NodeId, req: BoundsRequest): Promise<BoundsAnswer> {
    this.boundsAsked.push({ from, req });
    return this.onBounds(from, req);
  }
  fetchLog(from: NodeId, req: FetchLogRequest, signal: AbortSignal): AsyncIterable<LogChunk> {
    this.fetches.push({ from, req });
    return this.onFetchLog(from, req, signal);
  }
}

/** How many calls of any kind reached the handler. */
export function callsSeen(h: RecordingHandler): number {
  return h.received.length + h.proposals.length + h.appends.length + h.reads.length + h.fetches.length + h.boundsAsked.length + h.controls.length;
}

export async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface TestNode {
  readonly id: NodeId;
  readonly t: GrpcTransport;
  readonly h: RecordingHandler;
}

/**
 * Transports for nodes 1..n on 127.0.0.1 (free ports), each a peer of every other, proving the test
 * secret; `extra` adds or replaces options per node.
 */
export async function startNodes(n: number, extra: (id: NodeId) => Partial<TransportOptions> = () => ({})): Promise<TestNode[]> {
  const nodes: TestNode[] = [];
  for (let id = 1; id <= n; id++) {
    const h = new RecordingHandler();
    const t = await GrpcTransport.start({ self: id, incarnation: `inc-${id}`, listen: '127.0.0.1:0', peers: [], handler: h, logger: quietLogger, security: testSecurity, ...extra(id) });
    nodes.push({ id, t, h });
  }
  for (const a of nodes) for (const b of nodes) if (a !== b) a.t.addPeer({ id: b.id, raftAddress: `127.0.0.1:${b.t.port}` });
  return nodes;
}

export async function stopNodes(nodes: readonly TestNode[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.t.close()));
}
