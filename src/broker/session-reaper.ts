/**
 * Closes the subscription stream sessions of a node that has been unreachable for longer than any
 * stream may go without a commit (the longest commit_timeout, 60 s).
 *
 * A node closes the sessions of its previous process itself when it starts again (stream.close_stale),
 * and a live node closes a session whose client stopped committing. A node that stays down does
 * neither: its sessions would keep their partitions for good and a stream opened on another node would
 * get nothing. So the metadata leader, which sees every member's reachability, closes them: a stream
 * on that node, if it still runs behind a partition, can no longer commit past its commit timeout
 * anyway, and what it did not commit goes to the next stream (at-least-once, as after any hand-over).
 */
import type { Logger } from 'pino';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';

export interface SessionReaperDeps {
  /** Only the metadata leader acts (one proposer; every node agrees once it is applied). */
  isLeader(): boolean;
  peers(): readonly number[];
  reachable(node: number): boolean;
  /** Whether any session of a subscription is held by `node`. */
  holdsSessions(node: number): boolean;
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
  nowMs(): number;
  monotonicMs(): number;
  logger: Logger;
  /** How long a node must be unreachable before its sessions are closed. */
  afterMs: number;
}

export class SessionReaper {
  readonly #d: SessionReaperDeps;
  /** Peer -> monotonic time it was first seen unreachable (in this run of checks). */
  readonly #downSince = new Map<number, number>();

  constructor(d: SessionReaperDeps) {
    this.#d = d;
  }

  /** One check; returns the nodes whose sessions were closed. */
  async check(): Promise<number[]> {
    const d = this.#d;
    const now = d.monotonicMs();
    const closed: number[] = [];
    for (const peer of d.peers()) {
      if (d.reachable(peer)) {
        this.#downSince.delete(peer);
        continue;
      }
      const since = this.#downSince.get(peer) ?? now;
      this.#downSince.set(peer, since);
      if (now - since < d.afterMs || !d.isLeader() || !d.holdsSessions(peer)) continue;
      // No process has the empty incarnation: every session of that node is closed.
      const r = await d.propose({ op: 'stream.close_stale', node: peer, incarnation: '', atMs: d.nowMs() });
      if (r.ok) {
        closed.push(peer);
        d.logger.warn({ node: peer, unreachableMs: Math.round(now - since) }, 'closed the subscription stream sessions of a node unreachable for longer than any commit timeout');
      }
    }
    return closed;
  }
}
