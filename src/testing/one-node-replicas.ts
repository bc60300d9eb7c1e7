/**
 * TEST-ONLY: the partition groups of a single node (PartitionReplicas on a RaftNodeHost that never
 * ticks on its own) over a KV the test owns, for unit tests of the partition log's read and retention
 * paths. Each partition is a one-member group that elects itself at open.
 */
import pino from 'pino';
import type { OrderedKv } from '../log/index.js';
import { PartitionReplicas } from '../broker/partition-replicas.js';
import { RaftNodeHost, type TickSource } from '../broker/raft-host/node-host.js';

const logger = pino({ level: 'silent' });
const noTicks: TickSource = { every: () => () => undefined };
let ids = 0;

export interface OneNode {
  readonly host: RaftNodeHost;
  readonly replicas: PartitionReplicas;
  close(): Promise<void>;
}

/** `clockMs` is the node's monotonic clock; its wall clock is 1_700_000_000_000 plus it. */
export function oneNodeReplicas(kv: OrderedKv, o: { clockMs?: () => number; memoryEntries?: number } = {}): OneNode {
  const mono = o.clockMs ?? (() => 0);
  const clock = { nowMs: () => 1_700_000_000_000 + mono(), monotonicMs: mono };
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock, ticks: noTicks, logger, onFatal: (err) => { throw err; } });
  const replicas = new PartitionReplicas({
    self: 1,
    kv,
    host,
    placement: (topic, partition) => ({ group: 1000 + topic * 16 + partition, replicas: [1], start: 0 }),
    clock,
    // Request ids must differ across every node a test makes (a retried id is de-duplicated).
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: 5000,
    ...(o.memoryEntries === undefined ? {} : { memoryEntries: o.memoryEntries }),
  });
  host.start(undefined);
  return {
    host,
    replicas,
    close: async () => {
      await replicas.close();
      await host.close();
    },
  };
}
