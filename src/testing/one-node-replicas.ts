/**
 * TEST-ONLY: node 1's partition groups (PartitionReplicas on a RaftNodeHost that never ticks on its
 * own) over a KV the test owns. Each partition is a group placed on `replicaSet`: node 1 alone by
 * default, a one-member group that elects itself at open (unit tests of the partition log's read,
 * retention and apply paths); with other nodes listed nobody answers node 1, so its replicas never
 * lead. With a NodeDisk the disk numbers each write, for tests of what a lost write-ahead-log tail or
 * raft marker does to the groups (a KV rolled back to an earlier durable image stands for RocksDB
 * dropping the end of its log).
 */
import pino from 'pino';
import type { OrderedKv } from '../log/index.js';
import type { NodeDisk } from '../broker/node-disk.js';
import { PartitionReplicas } from '../broker/partition-replicas.js';
import { RaftNodeHost, type TickSource } from '../broker/raft-host/node-host.js';

const logger = pino({ level: 'silent' });
const noTicks: TickSource = { every: () => () => undefined };
let ids = 0;

/** The group of partition `partition` of topic `topic` (the default placement). */
export const oneNodeGroupOf = (topic: number, partition: number): number => 1000 + topic * 16 + partition;

export interface OneNode {
  readonly host: RaftNodeHost;
  readonly replicas: PartitionReplicas;
  close(): Promise<void>;
}

export interface OneNodeOptions {
  /** The node's disk (it numbers each write and keeps the raft marker); absent: none. */
  readonly disk?: NodeDisk;
  /** The partition's replicas (member ids); default [1]. */
  readonly replicaSet?: readonly number[];
  /** The group of a partition; default oneNodeGroupOf. */
  readonly groupOf?: (topic: number, partition: number) => number;
  /** The node's monotonic clock; its wall clock is 1_700_000_000_000 plus it. Default: always 0. */
  readonly clockMs?: () => number;
  /** Both clocks at once (the process's, for an append that must time out); wins over clockMs. */
  readonly clock?: { nowMs(): number; monotonicMs(): number };
  readonly appendTimeoutMs?: number;
  readonly memoryEntries?: number;
}

export function oneNodeReplicas(kv: OrderedKv, o: OneNodeOptions = {}): OneNode {
  const mono = o.clockMs ?? (() => 0);
  const clock = o.clock ?? { nowMs: () => 1_700_000_000_000 + mono(), monotonicMs: mono };
  const replicas = [...(o.replicaSet ?? [1])];
  const groupOf = o.groupOf ?? oneNodeGroupOf;
  const disk = o.disk === undefined ? {} : { disk: o.disk };
  const host = new RaftNodeHost({ self: 1, kv, ...disk, tickMs: 100, clock, ticks: noTicks, logger, onFatal: (err) => { throw err; } });
  const partitionReplicas = new PartitionReplicas({
    self: 1,
    kv,
    ...disk,
    host,
    placement: (topic, partition) => ({ group: groupOf(topic, partition), replicas, start: 0 }),
    clock,
    // Request ids must differ across every node a test makes (a retried id is de-duplicated).
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: o.appendTimeoutMs ?? 5000,
    ...(o.memoryEntries === undefined ? {} : { memoryEntries: o.memoryEntries }),
  });
  host.start(undefined);
  return {
    host,
    replicas: partitionReplicas,
    close: async () => {
      await partitionReplicas.close();
      await host.close();
    },
  };
}
