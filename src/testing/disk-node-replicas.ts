/**
 * TEST-ONLY: node 1's partition groups (PartitionReplicas on a RaftNodeHost that never ticks on its
 * own) over a KV and a NodeDisk the test owns, for tests of what a lost write-ahead-log tail or raft
 * marker does to them (the disk numbers each write; a KV rolled back to an earlier durable image stands
 * for RocksDB dropping the end of its log). Partition p of any topic is group `diskNodeGroupOf(p)`,
 * placed on `replicaSet` (node 1 alone by default: its replicas elect themselves; with other nodes
 * listed, nobody answers node 1, so its replicas never lead).
 */
import pino from 'pino';
import type { OrderedKv } from '../log/index.js';
import type { NodeDisk } from '../broker/node-disk.js';
import { PartitionReplicas } from '../broker/partition-replicas.js';
import { RaftNodeHost, type TickSource } from '../broker/raft-host/node-host.js';

const logger = pino({ level: 'silent' });
const noTicks: TickSource = { every: () => () => undefined };
let ids = 0;

/** The group of partition p. */
export const diskNodeGroupOf = (p: number): number => 1000 + p;

export interface DiskNode {
  readonly host: RaftNodeHost;
  readonly replicas: PartitionReplicas;
  close(): Promise<void>;
}

export interface DiskNodeOptions {
  /** The partition's replicas (member ids); default [1]. */
  readonly replicaSet?: number[];
  /** Default: the process's clocks (an append that cannot commit then times out). */
  readonly clock?: { nowMs(): number; monotonicMs(): number };
  readonly appendTimeoutMs?: number;
}

export function diskNodeReplicas(kv: OrderedKv, disk: NodeDisk, o: DiskNodeOptions = {}): DiskNode {
  const clock = o.clock ?? { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
  const replicaSet = o.replicaSet ?? [1];
  const host = new RaftNodeHost({ self: 1, kv, disk, tickMs: 100, clock, ticks: noTicks, logger, onFatal: (err) => { throw err; } });
  const replicas = new PartitionReplicas({
    self: 1,
    kv,
    disk,
    host,
    placement: (_topic, partition) => ({ group: diskNodeGroupOf(partition), replicas: replicaSet }),
    clock,
    // Request ids must differ across every node a test makes (a retried id is de-duplicated).
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `disk-node-request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: o.appendTimeoutMs ?? 5000,
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
