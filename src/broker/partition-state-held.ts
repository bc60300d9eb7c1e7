/**
 * Whether this node's data directory holds partition raft state, asked when its metadata group holds
 * none and does not found the group (metadata-restore.ts).
 *
 * Why. Such a directory would otherwise start the metadata group as a NEW member, under a new member
 * id (docs/metadata-raft.md, "A wiped directory is a new member"), and its partition groups follow
 * that id (partition-replicas.ts, `member`). A directory that lost every metadata record but kept
 * partition records (a lost write-ahead log tail that held the metadata group's records only; a
 * metadata directory restored without its storages) would then orphan those records: they were
 * written under the former member id, which nobody runs any more. Where other replicas hold the
 * partition, the metadata leader replaces the former member by an empty new one; a partition whose
 * only replica it was (replication factor 1) keeps a placement naming the former member, its
 * replacement waits for good for a leader nobody can elect (the partition takes no writes, and no
 * move can start from it), and, by reading replica-mover.ts (dropStored), a restart before the
 * replacement is recorded drops the records as those of a replica moved away: every event
 * acknowledged on it gone, with no operator asked. So a directory that holds partition state keeps
 * its member id: its metadata member starts empty and damaged (it learns a term floor and the leader
 * repairs it), and its partition replicas go on under the id their records were written under,
 * repaired by their leaders where their state was damaged too.
 *
 * Returns what was found (for the log line), or undefined. Cost: one seek in the node's KV and one
 * directory listing, at a start that found no metadata state only.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { OrderedKv } from '../log/index.js';
import type { NodeDisk } from './node-disk.js';
import { groupStart, raftEnd } from './raft-keys.js';

/**
 * What a new metadata member id would orphan: the partition state held here, when the id would
 * change. A directory that made its new member id before and found no loss since gets the same id
 * again (node-disk.ts, newMetadataMember): its partition records, written under that id, stay its
 * own, and it goes on as the new, undamaged member it was (a wiped node restarted before the leader
 * added it).
 */
export async function orphanedByNewMember(disk: Pick<NodeDisk, 'wouldMakeMetadataMember'>, kv: OrderedKv, storagesDir: string | undefined): Promise<string | undefined> {
  return disk.wouldMakeMetadataMember ? partitionStateHeld(kv, storagesDir) : undefined;
}

export async function partitionStateHeld(kv: OrderedKv, storagesDir: string | undefined, metadataGroup = 0): Promise<string | undefined> {
  // Partition groups take every id but the metadata group's (0, the lowest): the first key after it.
  for await (const [k] of kv.iterate({ gte: groupStart(metadataGroup + 1), lt: raftEnd, limit: 1 })) {
    return `raft records of partition group ${k.readUInt32BE(1)}`;
  }
  // An operator-created storage keeps its partition groups in a RocksDB of its own (storage-replicas.ts),
  // under the same member id. Its directory is only made when the storage opened here: taken as state.
  const storages = storagesDir !== undefined && existsSync(storagesDir) ? readdirSync(storagesDir) : [];
  return storages.length > 0 ? `partition logs of the storages ${storages.sort().join(', ')}` : undefined;
}
