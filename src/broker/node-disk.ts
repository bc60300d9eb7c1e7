/**
 * What a node knows about its own data directory: its identity (node id, a random disk id made when
 * the directory was first initialised, the cluster it belongs to) and whether RocksDB lost raft
 * writes that were durable once.
 *
 * Why. RocksDB replays its write-ahead log at open in point-in-time mode (src/log/rocks-kv.ts): at
 * the first corrupt record it stops, and everything after it is silently gone. A Raft member that
 * comes back with an older log or hard state than it had acknowledged could vote twice in a term or
 * elect a leader that lacks committed entries. So every raft write carries the next value of a
 * node-wide sequence number (one key, in the same atomic batch), and after a durable write the
 * highest durable sequence number is written to a small marker outside RocksDB (a DurableCell beside
 * its files). At start, a stored sequence below the marker's means the log lost its tail. Every raft
 * group member on the node is then marked damaged (raft-keys.ts, kind 0x04) in one durable write
 * before the marker moves on, and stays so until a healthy leader has repaired it.
 *
 * The marker also holds the term ceiling (termCeiling): a lost tail can take a member's newest term,
 * and the damaged member starts at the ceiling instead of its older stored term.
 *
 * Cost: one key put per raft write and at most one marker write (one O_DSYNC pwrite, off the path of
 * any acknowledgement) in flight per node, whatever the number of groups: the marker holds one
 * number. Paced (MarkerPacing): a marker write starts at least `intervalMs` after the one before it,
 * so a node that makes a durable raft write every few milliseconds does not put a second flush of the
 * disk beside every one of them; a raise of the term ceiling, a flush and a close are not paced. The
 * marker therefore names every durable write at most one interval and two marker writes after it
 * became durable; a tail lost within that lag is not detected (docs/storage.md, "The raft marker").
 *
 * Order of initialisation: the marker is written (durably) before the identity. A crash between the
 * two leaves a directory without identity, which the next start initialises again; so a directory
 * with an identity always had a marker, and a missing or foreign marker means it was lost. The other
 * way round, a marker that names a durable raft write (a sequence number above 0) beside a KV without
 * identity means the KV lost everything from its first write on (a write-ahead log lost from its
 * start): the directory is initialised again, as a wiped one, but knows that it lost raft state.
 *
 * Groups that lost everything. The damage marks go to groups that still have a record. A group whose
 * every record was in the lost tail (or a directory that lost its identity too) looks like a group
 * never hosted here, and a partition replica that finds no state founds its group afresh: term 1, no
 * vote, no entries it had acknowledged, so it could vote twice in a term and elect a leader without
 * a committed entry. So a loss is also recorded in the identity (`lostRaftState`), and a node with
 * that record does not found a group it holds no state for: the member starts empty and damaged and
 * is repaired by the leader (partition-replicas.ts). The record stays, and each loss is counted:
 * the directory registers in the metadata under a token of its disk id and loss count, and founds
 * only the partition groups created after that registration (metadata/disk-registry.ts).
 */
import { createHash } from 'node:crypto';
import { assert } from '../core/assert.js';
import { memberIdOf, memberIncarnationMax, nodeOfMember } from '../core/member-id.js';
import type { DurableCell, KvBatch, OrderedKv } from '../log/index.js';
import type { NodeId } from '../raft/index.js';
import { diskToken } from '../metadata/disk-registry.js';
import {
  entryKeyIndex,
  groupKey,
  groupMax,
  groupStart,
  kindDamage,
  kindEntry,
  kindHardState,
  kindSnapshot,
  nodeIdentityKey,
  raftEnd,
  writeSeqKey,
} from './raft-keys.js';
import { decodeLegacyEntry, decodeLegacyHardState, decodeLegacySnapshot } from './raft-legacy-records.js';
import {
  decodeHardStateRecord,
  decodeU64Record,
  encodeDamageRecord,
  encodeEntryRecord,
  encodeHardStateRecord,
  encodeSnapshotRecord,
  encodeU64Record,
  frameRecord,
  RaftRecordCorruptError,
  unframeRecord,
} from './raft-records.js';

export interface FounderRecord {
  readonly id: NodeId;
  readonly diskId: string;
}

export interface NodeIdentity {
  readonly nodeId: NodeId;
  /** Made when this data directory was first initialised; a wiped directory gets a new one. */
  readonly diskId: string;
  /** '' until the node founded a cluster or joined one; legacyClusterId for directories migrated from before. */
  readonly clusterId: string;
  /** The founding members of the cluster as recorded by a founder (empty on a node that joined later). */
  readonly founders: readonly FounderRecord[];
  /**
   * Why this directory is known to have lost raft writes that were durable (the first loss found), or
   * absent. A node with it founds no raft group it holds no state for (see the header).
   */
  readonly lostRaftState?: string;
  /**
   * How many times a loss of durable raft writes was found on this directory (absent: never). Part of
   * its registration in the metadata (metadata/disk-registry.ts): after each loss it registers again.
   */
  readonly losses?: number;
  /** Initialised over raft state written before identities existed (that state is its own, never wiped). */
  readonly migrated?: true;
  /**
   * This directory's member id in the metadata group when it is not the node id (core/member-id.ts):
   * made when the directory started the group empty without founding it (a wiped or new directory, or
   * one that lost its raft state), so that it joins as a new member (docs/metadata-raft.md). Absent:
   * the node id (a founder's directory, or one that joined before member ids existed).
   */
  readonly metadataMember?: number;
  /** The loss count (`losses`, 0 when absent) when metadataMember was made: a later loss needs a new one. */
  readonly metadataMemberLosses?: number;
}

/**
 * The incarnation a directory's new metadata member takes: drawn from its disk id and loss count (so
 * the same directory draws the same one at every start until it has written anything), in
 * [1, memberIncarnationMax]. Two directories of one node may draw the same incarnation (about one
 * chance in four million per pair): the metadata refuses the registration of the second
 * (state-machine.ts, node.disk), so the two are never taken for one member.
 */
export function metadataIncarnationOf(diskId: string, losses: number): number {
  const h = createHash('sha256').update(`brook-metadata-member/v1:${diskId}/${losses}`).digest();
  return (h.readUInt32BE(0) % memberIncarnationMax) + 1;
}

/** The token under which this directory registers in the metadata (metadata/disk-registry.ts). */
export const diskTokenOf = (id: NodeIdentity): string => diskToken(id.diskId, id.losses ?? (id.lostRaftState === undefined ? 0 : 1));

/**
 * Whether this directory founded its cluster and never lost raft state: it then never held a raft
 * group it holds no state for, and needs no registration before founding one.
 */
export const isFoundingDisk = (id: NodeIdentity): boolean => id.lostRaftState === undefined && (id.migrated === true || id.founders.some((f) => f.id === id.nodeId && f.diskId === id.diskId));

/** The marker's file name in the data directory (beside RocksDB's own files, which it ignores). */
export const markerFileName = 'raft-marker';

/** The cluster id of directories written before cluster ids existed (all such nodes share it). */
export const legacyClusterId = 'legacy';

/** The data directory cannot be used as it is; the message says what to do. */
export class NodeDiskError extends Error {
  override name = 'NodeDiskError';
}

export interface NodeDiskLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface NodeDiskOptions {
  readonly kv: OrderedKv;
  /** The marker (a FileCell in the data directory in production). */
  readonly cell: DurableCell;
  readonly self: NodeId;
  /** A fresh random id (the disk id). */
  readonly newId: () => string;
  readonly logger: NodeDiskLogger;
  /** Absent: each marker write starts as soon as the one before it ended (no interval). */
  readonly pacing?: MarkerPacing;
}

/**
 * How far apart marker writes start (see the header): a clock and a one-shot timer, the event loop's
 * in production (systemMarkerPacing), virtual time in the simulator.
 */
export interface MarkerPacing {
  readonly intervalMs: number;
  monotonicMs(): number;
  /** Calls `fn` once, `ms` from now. */
  after(ms: number, fn: () => void): void;
}

/**
 * The interval between two marker writes in production. At 500 durable raft writes per second (the
 * publish latency benchmark) the marker then writes at most 100 times a second instead of 500, and a
 * lost tail goes undetected only if every write it took became durable within the last ~10 ms (plus two
 * marker writes) before the crash (docs/storage.md, "The raft marker").
 */
export const markerIntervalMs = 10;

export const systemMarkerPacing = (intervalMs = markerIntervalMs): MarkerPacing => ({
  intervalMs,
  monotonicMs: () => performance.now(),
  after: (ms, fn) => void setTimeout(fn, ms).unref(),
});

export type DiskOpening = 'created' | 'migrated' | 'opened';

function encodeIdentity(id: NodeIdentity): Buffer {
  return frameRecord('nodeIdentity', nodeIdentityKey, Buffer.from(JSON.stringify(id), 'utf8'));
}

function decodeIdentity(value: Buffer): NodeIdentity {
  const body = unframeRecord('nodeIdentity', nodeIdentityKey, value);
  let v: NodeIdentity;
  try {
    v = JSON.parse(body.toString('utf8')) as NodeIdentity;
  } catch (err) {
    throw new RaftRecordCorruptError(nodeIdentityKey, `identity is not JSON (${(err as Error).message})`);
  }
  if (!Number.isSafeInteger(v.nodeId) || typeof v.diskId !== 'string' || typeof v.clusterId !== 'string' || !Array.isArray(v.founders)) {
    throw new RaftRecordCorruptError(nodeIdentityKey, 'identity lacks a field');
  }
  if (v.lostRaftState !== undefined && typeof v.lostRaftState !== 'string') throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a lostRaftState that is not a string');
  if (v.migrated !== undefined && v.migrated !== true) throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a migrated flag that is not true');
  if (v.losses !== undefined && !(Number.isSafeInteger(v.losses) && v.losses >= 1)) throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a loss count that is not a positive integer');
  if (v.metadataMember !== undefined && !(Number.isSafeInteger(v.metadataMember) && v.metadataMember > 0 && nodeOfMember(v.metadataMember) === v.nodeId)) {
    throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a metadata member id that is not a member of its node');
  }
  if (v.metadataMemberLosses !== undefined && !(Number.isSafeInteger(v.metadataMemberLosses) && v.metadataMemberLosses >= 0)) throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a metadata member loss count that is not an integer');
  return v;
}

/**
 * The marker: the latest durable raft write's sequence number, the term ceiling, the disk id. Byte 8
 * is 0 in this layout; markers written before the term ceiling existed had the disk id's first byte
 * there (never 0: a disk id is text), and read as a ceiling of 0 (unknown).
 */
function encodeMarker(seq: number, ceiling: number, diskId: string): Buffer {
  const id = Buffer.from(diskId, 'utf8');
  const out = Buffer.alloc(17 + id.length);
  out.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 0);
  out.writeUInt32BE(seq % 0x1_0000_0000, 4);
  out.writeUInt8(0, 8);
  out.writeUInt32BE(Math.floor(ceiling / 0x1_0000_0000), 9);
  out.writeUInt32BE(ceiling % 0x1_0000_0000, 13);
  id.copy(out, 17);
  return out;
}

function decodeMarker(payload: Buffer): { seq: number; ceiling: number; diskId: string } | undefined {
  if (payload.length < 8) return undefined;
  const seq = payload.readUInt32BE(0) * 0x1_0000_0000 + payload.readUInt32BE(4);
  if (!Number.isSafeInteger(seq)) return undefined;
  if (payload.length < 17 || payload[8] !== 0) return { seq, ceiling: 0, diskId: payload.subarray(8).toString('utf8') };
  const ceiling = payload.readUInt32BE(9) * 0x1_0000_0000 + payload.readUInt32BE(13);
  return Number.isSafeInteger(ceiling) ? { seq, ceiling, diskId: payload.subarray(17).toString('utf8') } : undefined;
}

/** The groups that have any record, in order (one seek per group, not a scan of their logs). */
async function groupsWithState(kv: OrderedKv): Promise<number[]> {
  const groups: number[] = [];
  let from = groupStart(0);
  for (;;) {
    let found: number | undefined;
    for await (const [k] of kv.iterate({ gte: from, lt: raftEnd, limit: 1 })) found = k.readUInt32BE(1);
    if (found === undefined) return groups;
    groups.push(found);
    if (found === groupMax) return groups;
    from = groupStart(found + 1);
  }
}

/**
 * Rewrites every raft record of a pre-checksum directory in the current format. A record that does
 * not parse is dropped and its group marked damaged (the store then cuts the log at the gap).
 */
async function rewriteLegacy(kv: OrderedKv): Promise<{ ops: Array<[Buffer, Buffer | undefined]>; records: number; damaged: number[] }> {
  const ops: Array<[Buffer, Buffer | undefined]> = [];
  const b = { put: (k: Buffer, v: Buffer) => void ops.push([k, v]), del: (k: Buffer) => void ops.push([k, undefined]) };
  let records = 0;
  const damaged = new Map<number, string>();
  for await (const [k, v] of kv.iterate({ gte: groupStart(0), lt: raftEnd })) {
    const group = k.readUInt32BE(1);
    const kind = k[5];
    try {
      if (kind === kindHardState && k.length === 6) b.put(k, encodeHardStateRecord(k, decodeLegacyHardState(k, v)));
      else if (kind === kindSnapshot && k.length === 6) b.put(k, encodeSnapshotRecord(k, decodeLegacySnapshot(k, v)));
      else if (kind === kindEntry && k.length === 14) b.put(k, encodeEntryRecord(k, decodeLegacyEntry(k, v)));
      else throw new RaftRecordCorruptError(k, 'not a key of the pre-checksum format');
      records++;
    } catch (err) {
      if (!(err instanceof RaftRecordCorruptError)) throw err;
      b.del(k);
      if (!damaged.has(group)) damaged.set(group, `a record of the pre-checksum format did not decode while rewriting it: ${err.reason}`);
    }
  }
  for (const [group, reason] of damaged) b.put(groupKey(group, kindDamage), encodeDamageRecord(groupKey(group, kindDamage), { term: 0, index: 0, reason }));
  return { ops, records, damaged: [...damaged.keys()] };
}

export class NodeDisk {
  readonly #kv: OrderedKv;
  readonly #cell: DurableCell;
  readonly #log: NodeDiskLogger;
  readonly #pacing: MarkerPacing | undefined;
  #identity: NodeIdentity;
  /** The sequence number of the latest raft write issued. */
  #seq: number;
  /** The highest sequence number known durable, and the one the marker holds. */
  #durable: number;
  #marked: number;
  #marking: Promise<void> | undefined;
  /** When the latest marker write started (pacing's clock); and what ends a paced wait early. */
  #markedAtMs = Number.NEGATIVE_INFINITY;
  #hurry: (() => void) | undefined;
  /** flush() calls under way: their marker writes are not paced. */
  #flushing = 0;
  /**
   * The term ceiling (see termCeiling): the one the marker holds durably, and the highest asked for,
   * with the raises waiting for it.
   */
  #ceiling: number;
  #ceilingWanted: number;
  #ceilingWaiters: { term: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** Set at open when RocksDB lost raft writes (or the marker is gone): why every group was marked damaged. */
  readonly lostTail: string | undefined;
  readonly opening: DiskOpening;

  private constructor(o: NodeDiskOptions, identity: NodeIdentity, seq: number, durable: number, ceiling: number, lostTail: string | undefined, opening: DiskOpening) {
    this.#kv = o.kv;
    this.#cell = o.cell;
    this.#log = o.logger;
    this.#pacing = o.pacing;
    this.#identity = identity;
    this.#seq = seq;
    this.#durable = durable;
    this.#marked = durable;
    this.#ceiling = ceiling;
    this.#ceilingWanted = ceiling;
    this.lostTail = lostTail;
    this.opening = opening;
  }

  static async open(o: NodeDiskOptions): Promise<NodeDisk> {
    const raw = await o.kv.get(nodeIdentityKey);
    if (raw === null) return NodeDisk.#initialise(o);
    let identity: NodeIdentity;
    try {
      identity = decodeIdentity(raw);
    } catch (err) {
      throw new NodeDiskError(`${(err as Error).message}. This data directory cannot tell which node and cluster it belongs to; move it aside and start the node with an empty one: it joins its cluster again as a new, empty member.`);
    }
    if (identity.nodeId !== o.self) {
      throw new NodeDiskError(`this data directory belongs to node ${identity.nodeId}, not to node ${o.self}; start node ${identity.nodeId} on it, or give node ${o.self} an empty directory of its own`);
    }
    let stored = 0;
    let lostTail: string | undefined;
    const seqRaw = await o.kv.get(writeSeqKey);
    if (seqRaw !== null) {
      try {
        stored = decodeU64Record('writeSeq', writeSeqKey, seqRaw);
      } catch (err) {
        lostTail = `the raft write sequence record is corrupt (${(err as Error).message})`;
      }
    }
    let markerSeq = 0;
    let ceiling = 0;
    const marker = await o.cell.read();
    const m = marker.state === 'ok' ? decodeMarker(marker.payload) : undefined;
    if (marker.state === 'missing') lostTail ??= 'the raft marker file is missing (deleted, or lost with the file system): whether raft writes were lost cannot be told';
    else if (marker.state === 'corrupt') lostTail ??= `the raft marker file is corrupt (${marker.reason})`;
    else if (m === undefined) lostTail ??= 'the raft marker file holds no sequence number';
    else if (m.diskId !== identity.diskId) lostTail ??= `the raft marker file belongs to another data directory (disk ${m.diskId}, this one is ${identity.diskId})`;
    else {
      markerSeq = m.seq;
      ceiling = m.ceiling;
      if (m.seq > stored) {
        lostTail ??= `RocksDB holds raft writes up to #${stored}, but write #${m.seq} was durable before: the end of its write-ahead log was lost (point-in-time recovery stops at the first corrupt record)`;
      }
    }
    // Numbering goes on after what the KV holds, but only what the marker names is known durable: the
    // writes after it may be in the page cache alone (a kill -9 keeps them there, a power loss after it
    // does not), and a marker written before the next durable write (a raise of the term ceiling)
    // must not claim them, or a later power loss would look like a lost tail. The next durable write
    // makes them durable with it.
    const disk = new NodeDisk(o, identity, Math.max(stored, markerSeq), markerSeq, ceiling, lostTail, 'opened');
    if (lostTail !== undefined) await disk.#markAllDamaged(lostTail);
    return disk;
  }

  static async #initialise(o: NodeDiskOptions): Promise<NodeDisk> {
    const legacy = (await groupsWithState(o.kv)).length > 0;
    // A marker naming a durable raft write, with no identity in the KV: the KV lost its identity and
    // every raft write after it (see the header). 0 is what an initialisation that stopped before
    // writing the identity leaves.
    const before = await o.cell.read();
    const marked = before.state === 'ok' ? decodeMarker(before.payload) : undefined;
    const lost =
      marked !== undefined && marked.seq > 0
        ? `the data directory has no identity, but its raft marker says raft write #${marked.seq} was durable: RocksDB lost its write-ahead log from its start (point-in-time recovery stops at the first corrupt record)`
        : before.state === 'corrupt'
          ? `the data directory has no identity, and its raft marker is corrupt (${before.reason}): raft writes may have been lost with the identity`
          : undefined;
    const identity: NodeIdentity = { nodeId: o.self, diskId: o.newId(), clusterId: legacy ? legacyClusterId : '', founders: [], ...(legacy ? { migrated: true as const } : {}), ...(lost === undefined ? {} : { lostRaftState: lost, losses: 1 }) };
    // Numbering goes on above the lost writes, and the marker keeps their number until the identity
    // that records the loss is written: a crash in between finds the loss again.
    const seq = lost === undefined ? 0 : (marked?.seq ?? 0);
    // The marker first (see the header): a directory with an identity always had one.
    // The term ceiling survives the loss: it bounds the terms the lost writes may have held.
    const ceiling = lost === undefined ? 0 : (marked?.ceiling ?? 0);
    await o.cell.write(encodeMarker(seq, ceiling, identity.diskId));
    // Collected first (the rewrite reads the KV), written below in one atomic batch with the identity.
    const rewritten = legacy ? await rewriteLegacy(o.kv) : { ops: [], records: 0, damaged: [] };
    await o.kv.write((b) => {
      for (const [k, v] of rewritten.ops) {
        if (v === undefined) b.del(k);
        else b.put(k, v);
      }
      b.put(writeSeqKey, encodeU64Record('writeSeq', writeSeqKey, seq));
      b.put(nodeIdentityKey, encodeIdentity(identity));
    }, { durable: true });
    if (lost !== undefined) {
      o.logger.error({ diskId: identity.diskId, reason: lost }, 'raft state on this node was lost with the data directory\'s identity: it joins its cluster as a new, empty member, and its raft groups will not vote or lead until a healthy leader has repaired them');
    } else if (legacy) {
      o.logger.info({ diskId: identity.diskId, records: rewritten.records, damagedGroups: rewritten.damaged }, 'rewrote the raft log of a data directory from before record checksums in the checksummed format');
    } else {
      o.logger.info({ diskId: identity.diskId }, 'initialised an empty data directory');
    }
    return new NodeDisk(o, identity, seq, seq, ceiling, lost, legacy ? 'migrated' : 'created');
  }

  get identity(): NodeIdentity {
    return this.#identity;
  }

  /** This directory's member id in the metadata group (the node id unless it joined as a new member). */
  get metadataMember(): NodeId {
    return this.#identity.metadataMember ?? this.#identity.nodeId;
  }

  /**
   * The member id under which this directory starts the metadata group it holds no state for and does
   * not found: a new one (recorded durably before the group opens), or the one made before when no
   * loss was found since (a restart before anything was written under it).
   */
  async newMetadataMember(): Promise<NodeId> {
    const id = this.#identity;
    const losses = id.losses ?? (id.lostRaftState === undefined ? 0 : 1);
    if (!this.wouldMakeMetadataMember) return id.metadataMember!;
    const member = memberIdOf(id.nodeId, metadataIncarnationOf(id.diskId, losses));
    const next: NodeIdentity = { ...id, metadataMember: member, metadataMemberLosses: losses };
    await this.#kv.write((b) => b.put(nodeIdentityKey, encodeIdentity(next)), { durable: true });
    this.#identity = next;
    return member;
  }

  /**
   * Whether newMetadataMember would make a member id other than the one this directory runs as now:
   * false when it made one and found no loss since (a restart before anything was written under it).
   */
  get wouldMakeMetadataMember(): boolean {
    const id = this.#identity;
    const losses = id.losses ?? (id.lostRaftState === undefined ? 0 : 1);
    return !(id.metadataMember !== undefined && (id.metadataMemberLosses ?? 0) === losses);
  }

  /** Records (durably) the cluster this node founded or joined. */
  async setCluster(clusterId: string, founders: readonly FounderRecord[]): Promise<void> {
    assert(clusterId !== '', 'an empty cluster id');
    const next: NodeIdentity = { ...this.#identity, clusterId, founders: [...founders] };
    await this.#kv.write((b) => b.put(nodeIdentityKey, encodeIdentity(next)), { durable: true });
    this.#identity = next;
  }

  /**
   * Adds the next raft write sequence number to `b` (every raft write does, in its own batch) and
   * returns it; report it to durable() once the write is durable.
   */
  stamp(b: KvBatch): number {
    const seq = ++this.#seq;
    b.put(writeSeqKey, encodeU64Record('writeSeq', writeSeqKey, seq));
    return seq;
  }

  /** Raft write `seq` is durable: the marker follows (one marker write in flight at a time). */
  durable(seq: number): void {
    if (seq <= this.#durable) return;
    this.#durable = seq;
    this.#marking ??= this.#mark();
  }

  /**
   * The term ceiling: no raft group on this node has used a term above it (the host raises it, durably,
   * before a turn's messages carry a higher term: raiseTermCeiling). A lost tail can take a group's
   * term and vote with it; its damaged member then starts at this term (markAllDamaged), so it cannot
   * acknowledge a deposed leader of a term it had left behind before the loss. 0: unknown (a marker
   * written before the ceiling existed).
   */
  get termCeiling(): number {
    return this.#ceiling;
  }

  /**
   * Makes the term ceiling at least `term`, durably. Undefined when it is already; otherwise resolves
   * once the marker holds it, and rejects if the marker cannot be written (the caller must then not
   * send what carries the term).
   */
  raiseTermCeiling(term: number): Promise<void> | undefined {
    if (term <= this.#ceiling) return undefined;
    this.#ceilingWanted = Math.max(this.#ceilingWanted, term);
    const p = new Promise<void>((resolve, reject) => this.#ceilingWaiters.push({ term, resolve, reject }));
    // What carries the term waits for this write: it does not wait for the interval.
    this.#hurry?.();
    this.#marking ??= this.#mark();
    return p;
  }

  /** Waits until the interval since the latest marker write has passed, unless something waits for the marker. */
  async #paced(): Promise<void> {
    const p = this.#pacing;
    if (p === undefined) return;
    const waitMs = this.#markedAtMs + p.intervalMs - p.monotonicMs();
    if (waitMs <= 0 || this.#flushing > 0 || this.#ceiling < this.#ceilingWanted) return;
    await new Promise<void>((resolve) => {
      const go = (): void => {
        if (this.#hurry !== go) return;
        this.#hurry = undefined;
        resolve();
      };
      this.#hurry = go;
      p.after(waitMs, go);
    });
  }

  async #mark(): Promise<void> {
    try {
      while (this.#marked < this.#durable || this.#ceiling < this.#ceilingWanted) {
        await this.#paced();
        const seq = this.#durable;
        const ceiling = this.#ceilingWanted;
        if (this.#pacing !== undefined) this.#markedAtMs = this.#pacing.monotonicMs();
        try {
          await this.#cell.write(encodeMarker(seq, ceiling, this.#identity.diskId));
          this.#marked = seq;
          this.#ceiling = ceiling;
          const waiting = this.#ceilingWaiters;
          this.#ceilingWaiters = waiting.filter((w) => w.term > ceiling);
          for (const w of waiting) if (w.term <= ceiling) w.resolve();
        } catch (err) {
          // A marker that lags only weakens the check at the next start (it never makes a healthy
          // log look damaged), so the node goes on; the next durable write tries again. A raise of
          // the term ceiling cannot wait for that: what waits for it is told.
          this.#log.error({ err: (err as Error).message, seq }, 'writing the raft marker failed; the lost-tail check at the next start will be weaker');
          const waiting = this.#ceilingWaiters;
          this.#ceilingWaiters = [];
          this.#ceilingWanted = this.#ceiling;
          for (const w of waiting) w.reject(err);
          return;
        }
      }
    } finally {
      this.#marking = undefined;
    }
  }

  /** Resolves once the marker holds every sequence number reported durable so far. */
  async flush(): Promise<void> {
    this.#flushing++;
    try {
      this.#hurry?.();
      while (this.#marking !== undefined) await this.#marking;
      if (this.#marked < this.#durable) {
        this.#marking = this.#mark();
        await this.#marking;
      }
    } finally {
      this.#flushing--;
    }
  }

  async close(): Promise<void> {
    await this.flush();
    await this.#cell.close();
  }

  /**
   * Marks every group with state damaged, and records the loss in the identity (for groups that lost
   * every record), in one durable write, and moves the marker on.
   */
  async #markAllDamaged(reason: string): Promise<void> {
    const groups = await groupsWithState(this.#kv);
    const marks: Array<[Buffer, Buffer]> = [];
    for (const g of groups) {
      const dk = groupKey(g, kindDamage);
      if ((await this.#kv.get(dk)) !== null) continue; // already damaged: the first reason stands
      // The stored term may be older than the lost one: the ceiling bounds every term used here.
      marks.push([dk, encodeDamageRecord(dk, { term: Math.max(await this.#storedTerm(g), this.#ceiling), index: await this.#lastStoredIndex(g), reason })]);
    }
    // Every loss counts (the registration token changes with it); the first reason stays the one shown.
    const identity: NodeIdentity = { ...this.#identity, lostRaftState: this.#identity.lostRaftState ?? reason, losses: (this.#identity.losses ?? (this.#identity.lostRaftState === undefined ? 0 : 1)) + 1 };
    let seq = 0;
    await this.#kv.write((b) => {
      for (const [k, v] of marks) b.put(k, v);
      b.put(nodeIdentityKey, encodeIdentity(identity));
      seq = this.stamp(b);
    }, { durable: true });
    this.#identity = identity;
    this.durable(seq);
    await this.flush();
    this.#log.error({ reason, groups }, 'raft state on this node is damaged: its raft groups will not vote or lead until a healthy leader has repaired them');
  }

  async #storedTerm(group: number): Promise<number> {
    const k = groupKey(group, kindHardState);
    const raw = await this.#kv.get(k);
    if (raw === null) return 0;
    try {
      return decodeHardStateRecord(k, raw).term;
    } catch {
      return 0;
    }
  }

  async #lastStoredIndex(group: number): Promise<number> {
    for await (const [k] of this.#kv.iterate({ gte: groupKey(group, kindEntry), lt: groupKey(group, kindEntry + 1), reverse: true, limit: 1 })) return entryKeyIndex(k);
    return 0;
  }
}
