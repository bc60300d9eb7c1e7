/**
 * TEST-ONLY: one node of a three-replica partition group (PartitionReplicas on a RaftNodeHost that
 * never ticks on its own) whose Raft messages the test writes by hand, for unit tests of what a
 * follower does with what its leader sends: log shipping for a snapshot, repairs, retention meanwhile.
 * Nothing it sends goes anywhere; the leader's log, when the test needs one served, comes from the
 * forwarder the test sets (`replicas.setForwarder`).
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import type { OrderedKv } from '../log/index.js';
import { encodeBatchEntry } from '../log/partition-entry.js';
import type { Entry, Message } from '../raft/index.js';
import { PartitionReplicas, type AppendForwarder } from '../broker/partition-replicas.js';
import { RaftNodeHost, type TickSource } from '../broker/raft-host/node-host.js';
import type { GroupHandler } from '../transport/index.js';
import { encodeImage, type PartitionReplica } from '../broker/partition-replica.js';
import type { Offset } from '../core/offset.js';

const logger = pino({ level: 'silent' });
const noTicks: TickSource = { every: () => () => undefined };

/** The wall clock of the node (fixed: entries carry it as their append time). */
export const followerNowMs = 1_700_000_000_000;
/** The partition group's id (placement of nodes 1, 2, 3; this node is 1). */
export const followerGroup = 100;

export interface HandFedFollower {
  readonly host: RaftNodeHost;
  readonly replicas: PartitionReplicas;
  /** What the host reported as fatal (a test asserts it stays empty). */
  readonly fatal: unknown[];
  /** The group's transport handler once its replica is open (`replicas.ensure`): feed it messages. */
  handler(): GroupHandler;
  close(): Promise<void>;
}

/**
 * `onFatal` replaces collecting fatal errors in `fatal` (e.g. to fail the test at once); `formerMember`
 * is PartitionReplicas' (members of wiped directories).
 */
export function handFedFollower(kv: OrderedKv, o: { onFatal?: (err: unknown) => void; formerMember?: (member: number) => boolean } = {}): HandFedFollower {
  const fatal: unknown[] = [];
  const clock = { nowMs: () => followerNowMs, monotonicMs: () => 0 };
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock, ticks: noTicks, logger, onFatal: o.onFatal ?? ((err) => fatal.push(err)) });
  const handlers = new Map<number, GroupHandler>();
  const replicas = new PartitionReplicas({
    self: 1,
    kv,
    host,
    placement: () => ({ group: followerGroup, replicas: [1, 2, 3] }),
    clock,
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => 'x' },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: 5000,
    groups: { register: (g, h) => handlers.set(g, h), unregister: (g) => handlers.delete(g) },
    ...(o.formerMember === undefined ? {} : { formerMember: o.formerMember }),
  });
  host.start({ send: () => undefined });
  return {
    host,
    replicas,
    fatal,
    handler: () => {
      const h = handlers.get(followerGroup);
      assert.ok(h !== undefined, 'the group is not open');
      return h;
    },
    close: async () => {
      await replicas.close();
      await host.close();
    },
  };
}

/** A Raft message to node 1 with every field not given at its zero value. */
export function msg(m: Partial<Message> & Pick<Message, 'type' | 'from' | 'term'>): Message {
  return { to: 1, logTerm: 0, index: 0, entries: [], commit: 0, reject: false, rejectHint: 0, context: '', snapshot: undefined, ...m };
}

/** A partition entry of one event `{"i":index}`, appended at `appendedMs`. */
export function batchEntry(index: number, term: number, appendedMs = followerNowMs): Entry {
  return { index, term, type: 'normal', data: encodeBatchEntry(appendedMs, `r${index}`, [Buffer.from(`{"i":${index}}`)]) };
}

/** Waits (polling every 2 ms, 5 s at most) until `ok`, or fails naming `what`. */
export async function until(what: string, ok: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A leader that serves `log` (in one chunk per fetch) and takes no appends; `fetches.n` counts the fetches. */
export function servingLog(log: readonly Entry[], fetches: { n: number } = { n: 0 }): AppendForwarder {
  return {
    forwardAppend: () => Promise.reject(new Error('not used')),
    fetchLog: (_to, req) => {
      fetches.n++;
      return (async function* () {
        yield { entries: log.filter((e) => e.index >= req.fromIndex && e.index <= req.toIndex) };
      })();
    },
  };
}

/**
 * The scene of the tests of the history (the retained log before a snapshot): the follower (its
 * replica of topic 7 partition 0 open) applies entries 4..6 of term 2 from node 2, one event each
 * (offsets 0..2), entry i appended at followerNowMs + i. Resolves once they are applied (or a fatal
 * error was reported: the test asserts `fatal`). Then `snapshotPastRetainedLog`.
 */
export async function applyEntries4to6(f: Pick<HandFedFollower, 'handler' | 'fatal'>, r: PartitionReplica): Promise<void> {
  f.handler().receive(msg({ type: 'app', from: 2, term: 2, logTerm: 1, index: 3, entries: [4, 5, 6].map((i) => batchEntry(i, 2, followerNowMs + i)), commit: 6 }));
  await until('entry 6 applied', () => r.applied === 6 || f.fatal.length > 0);
}

/**
 * Node 2's snapshot at 9 (offsets up to 5), whose retained log starts at entry 8, offset 4: after
 * entries 4..6 (applyEntries4to6) the follower lacks 7, which node 2's retention removed, so it
 * installs the snapshot without the log before it and fetches entries 8..9 afterwards.
 */
export const snapshotPastRetainedLog: Message = msg({
  type: 'snap',
  from: 2,
  term: 2,
  snapshot: { metadata: { index: 9, term: 2, confState: { voters: [1, 2, 3], learners: [] } }, data: encodeImage({ applied: 9, next: 6, oldest: 4, recent: [], start: [8, 4] }) },
});

/**
 * Opens the follower's replica of topic 7 partition 0 (the group at its founding configuration,
 * applied up to 3) and returns it with the group's handler.
 */
export async function openFollowerReplica(f: Pick<HandFedFollower, 'replicas' | 'handler'>): Promise<{ r: PartitionReplica; h: GroupHandler }> {
  const r = (await f.replicas.ensure(7, 0))!;
  const h = f.handler();
  assert.equal(r.applied, 3, 'the founding configuration');
  return { r, h };
}

/**
 * Node 2's snapshot at `index` of term `term`, sent in term `term`: the group's entries 4..index, one
 * event each (batchEntry: offsets 0..index - 4), all held (nothing retained away).
 */
export function snapshotOfEntriesTo(index: number, term: number): Message {
  return msg({ type: 'snap', from: 2, term, snapshot: { metadata: { index, term, confState: { voters: [1, 2, 3], learners: [] } }, data: encodeImage({ applied: index, next: index - 3, oldest: 0, recent: [] }) } });
}

/** Every event the replica holds from offset 0, as [offset, text] (up to 10). */
export async function readPairs(r: PartitionReplica): Promise<Array<[number, string]>> {
  return (await r.read(-1 as Offset, 10, 1 << 20)).map((e) => [e.offset, e.bytes.toString()]);
}

/** Lets the node's loop run for `ms`. */
export const settle = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms));
