/**
 * The partition logs of an operator-created storage (POST /storages): Raft groups like the default
 * storage's, on every node that holds a replica, in the storage's own RocksDB directory
 * (`<dataDir>/storages/<id>`). So a timeline on any storage is replicated and can be sealed by a
 * timeline switch, on one node as on many (one code path).
 *
 * Each storage has its own KV, its own raft marker (the lost-tail check of node-disk.ts is per
 * RocksDB) and its own node host (one write and one fsync per turn for that storage's groups); the
 * transport, the group dispatcher and the placement lookup are the node's. Events written to the
 * storage by versions before its logs were Raft groups (a PartitionStore in the same directory) stay
 * readable below each group's first offset, as the default storage's do (`legacy`).
 */
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Random } from '../core/ports.js';
import { FileCell, openRocksKv, PartitionStore } from '../log/index.js';
import type { NodeId } from '../raft/index.js';
import type { GroupHandler } from '../transport/index.js';
import { markerFileName, NodeDisk, systemMarkerPacing } from './node-disk.js';
import { PartitionReplicas, type AppendForwarder, type PlacementLookup } from './partition-replicas.js';
import { RaftNodeHost, systemTicks, type GroupTransport } from './raft-host/node-host.js';

export interface StorageReplicasOptions {
  readonly id: string;
  readonly dataDir: string;
  readonly self: NodeId;
  readonly placement: PlacementLookup;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  readonly appendTimeoutMs: number;
  readonly memoryEntries?: number;
  readonly tailCacheBytesMax: number;
  /** The node's dispatcher and transport (absent on a single node). */
  readonly groups?: { register(group: number, handler: GroupHandler): void; unregister(group: number): void };
  readonly transport?: { readonly send: GroupTransport['send']; readonly forwarder: AppendForwarder };
  readonly onFatal: (err: unknown) => void;
  /**
   * The member id the node's data directory runs as in partition groups (partition-replicas.ts): the
   * main directory's, since a storage's directory lives inside it and is wiped with it.
   */
  readonly member?: () => number;
  /** Whether a member a placement lists is a former member of its node (partition-replicas.ts). */
  readonly formerMember?: (member: number) => boolean;
}

export interface OpenedStorage {
  readonly replicas: PartitionReplicas;
  close(): Promise<void>;
}

/** The directory of every storage's logs. */
export function storagesDir(dataDir: string): string {
  return join(dataDir, 'storages');
}

/** The directory of a storage's logs. */
export function storageDir(dataDir: string, id: string): string {
  return join(storagesDir(dataDir), id);
}

export async function openStorageReplicas(o: StorageReplicasOptions): Promise<OpenedStorage> {
  const dir = storageDir(o.dataDir, o.id);
  mkdirSync(dir, { recursive: true });
  const logger = o.logger.child({ storage: o.id });
  const kv = await openRocksKv(dir);
  try {
    const disk = await NodeDisk.open({ kv, cell: new FileCell(join(dir, markerFileName)), self: o.self, newId: randomUUID, logger: logger.child({ component: 'disk' }), pacing: systemMarkerPacing() });
    const legacy = await PartitionStore.open(kv, { clock: o.clock, logger: logger.child({ component: 'log' }), tailCacheBytesMax: o.tailCacheBytesMax });
    const host = new RaftNodeHost({ self: o.self, kv, disk, tickMs: o.tickMs, clock: o.clock, ticks: systemTicks, logger: logger.child({ component: 'partitions' }), onFatal: o.onFatal });
    const replicas = new PartitionReplicas({
      self: o.self,
      kv,
      disk,
      host,
      placement: o.placement,
      clock: o.clock,
      random: o.random,
      logger: logger.child({ component: 'partitions' }),
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      appendTimeoutMs: o.appendTimeoutMs,
      legacy,
      ...(o.memoryEntries === undefined ? {} : { memoryEntries: o.memoryEntries }),
      ...(o.groups === undefined ? {} : { groups: o.groups }),
      ...(o.member === undefined ? {} : { member: o.member }),
      ...(o.formerMember === undefined ? {} : { formerMember: o.formerMember }),
    });
    if (o.transport !== undefined) replicas.setForwarder(o.transport.forwarder);
    host.start(o.transport === undefined ? undefined : { send: o.transport.send });
    logger.info({ dir }, 'storage opened');
    return {
      replicas,
      close: async () => {
        await replicas.close();
        await host.close();
        await legacy.close();
        await disk.close();
        await kv.close();
      },
    };
  } catch (err) {
    await kv.close();
    throw err;
  }
}
