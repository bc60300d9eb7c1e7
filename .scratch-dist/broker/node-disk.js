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
 * Cost: one key put per raft write and at most one marker write (plus its fdatasync, off the path of
 * any acknowledgement) in flight per node, whatever the number of groups: the marker holds one
 * number. It can lag the latest durable write by one marker write; a tail lost within that lag is not
 * detected (docs/storage.md).
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
 * is repaired by the leader (partition-replicas.ts). The record stays (a group created later is
 * founded damaged on this node too, and repaired by the first leader of its other members):
 * telling the groups created before the loss from those created after needs the metadata that
 * created them (docs/metadata-raft.md, "What remains").
 */
import { assert } from '../core/assert.js';
import { entryKeyIndex, groupKey, groupMax, groupStart, kindDamage, kindEntry, kindHardState, kindSnapshot, nodeIdentityKey, raftEnd, writeSeqKey, } from './raft-keys.js';
import { decodeLegacyEntry, decodeLegacyHardState, decodeLegacySnapshot } from './raft-legacy-records.js';
import { decodeHardStateRecord, decodeU64Record, encodeDamageRecord, encodeEntryRecord, encodeHardStateRecord, encodeSnapshotRecord, encodeU64Record, frameRecord, RaftRecordCorruptError, unframeRecord, } from './raft-records.js';
/** The marker's file name in the data directory (beside RocksDB's own files, which it ignores). */
export const markerFileName = 'raft-marker';
/** The cluster id of directories written before cluster ids existed (all such nodes share it). */
export const legacyClusterId = 'legacy';
/** The data directory cannot be used as it is; the message says what to do. */
export class NodeDiskError extends Error {
    name = 'NodeDiskError';
}
function encodeIdentity(id) {
    return frameRecord('nodeIdentity', nodeIdentityKey, Buffer.from(JSON.stringify(id), 'utf8'));
}
function decodeIdentity(value) {
    const body = unframeRecord('nodeIdentity', nodeIdentityKey, value);
    let v;
    try {
        v = JSON.parse(body.toString('utf8'));
    }
    catch (err) {
        throw new RaftRecordCorruptError(nodeIdentityKey, `identity is not JSON (${err.message})`);
    }
    if (!Number.isSafeInteger(v.nodeId) || typeof v.diskId !== 'string' || typeof v.clusterId !== 'string' || !Array.isArray(v.founders)) {
        throw new RaftRecordCorruptError(nodeIdentityKey, 'identity lacks a field');
    }
    if (v.lostRaftState !== undefined && typeof v.lostRaftState !== 'string')
        throw new RaftRecordCorruptError(nodeIdentityKey, 'identity has a lostRaftState that is not a string');
    return v;
}
function encodeMarker(seq, diskId) {
    const id = Buffer.from(diskId, 'utf8');
    const out = Buffer.alloc(8 + id.length);
    out.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 0);
    out.writeUInt32BE(seq % 0x1_0000_0000, 4);
    id.copy(out, 8);
    return out;
}
function decodeMarker(payload) {
    if (payload.length < 8)
        return undefined;
    const seq = payload.readUInt32BE(0) * 0x1_0000_0000 + payload.readUInt32BE(4);
    return Number.isSafeInteger(seq) ? { seq, diskId: payload.subarray(8).toString('utf8') } : undefined;
}
/** The groups that have any record, in order (one seek per group, not a scan of their logs). */
async function groupsWithState(kv) {
    const groups = [];
    let from = groupStart(0);
    for (;;) {
        let found;
        for await (const [k] of kv.iterate({ gte: from, lt: raftEnd, limit: 1 }))
            found = k.readUInt32BE(1);
        if (found === undefined)
            return groups;
        groups.push(found);
        if (found === groupMax)
            return groups;
        from = groupStart(found + 1);
    }
}
/**
 * Rewrites every raft record of a pre-checksum directory in the current format. A record that does
 * not parse is dropped and its group marked damaged (the store then cuts the log at the gap).
 */
async function rewriteLegacy(kv) {
    const ops = [];
    const b = { put: (k, v) => void ops.push([k, v]), del: (k) => void ops.push([k, undefined]) };
    let records = 0;
    const damaged = new Map();
    for await (const [k, v] of kv.iterate({ gte: groupStart(0), lt: raftEnd })) {
        const group = k.readUInt32BE(1);
        const kind = k[5];
        try {
            if (kind === kindHardState && k.length === 6)
                b.put(k, encodeHardStateRecord(k, decodeLegacyHardState(k, v)));
            else if (kind === kindSnapshot && k.length === 6)
                b.put(k, encodeSnapshotRecord(k, decodeLegacySnapshot(k, v)));
            else if (kind === kindEntry && k.length === 14)
                b.put(k, encodeEntryRecord(k, decodeLegacyEntry(k, v)));
            else
                throw new RaftRecordCorruptError(k, 'not a key of the pre-checksum format');
            records++;
        }
        catch (err) {
            if (!(err instanceof RaftRecordCorruptError))
                throw err;
            b.del(k);
            if (!damaged.has(group))
                damaged.set(group, `a record of the pre-checksum format did not decode while rewriting it: ${err.reason}`);
        }
    }
    for (const [group, reason] of damaged)
        b.put(groupKey(group, kindDamage), encodeDamageRecord(groupKey(group, kindDamage), { term: 0, index: 0, reason }));
    return { ops, records, damaged: [...damaged.keys()] };
}
export class NodeDisk {
    #kv;
    #cell;
    #log;
    #identity;
    /** The sequence number of the latest raft write issued. */
    #seq;
    /** The highest sequence number known durable, and the one the marker holds. */
    #durable;
    #marked;
    #marking;
    /** Set at open when RocksDB lost raft writes (or the marker is gone): why every group was marked damaged. */
    lostTail;
    opening;
    constructor(o, identity, seq, lostTail, opening) {
        this.#kv = o.kv;
        this.#cell = o.cell;
        this.#log = o.logger;
        this.#identity = identity;
        this.#seq = seq;
        this.#durable = seq;
        this.#marked = seq;
        this.lostTail = lostTail;
        this.opening = opening;
    }
    static async open(o) {
        const raw = await o.kv.get(nodeIdentityKey);
        if (raw === null)
            return NodeDisk.#initialise(o);
        let identity;
        try {
            identity = decodeIdentity(raw);
        }
        catch (err) {
            throw new NodeDiskError(`${err.message}. This data directory cannot tell which node and cluster it belongs to; move it aside and start the node with an empty one: it joins its cluster again as a new, empty member.`);
        }
        if (identity.nodeId !== o.self) {
            throw new NodeDiskError(`this data directory belongs to node ${identity.nodeId}, not to node ${o.self}; start node ${identity.nodeId} on it, or give node ${o.self} an empty directory of its own`);
        }
        let stored = 0;
        let lostTail;
        const seqRaw = await o.kv.get(writeSeqKey);
        if (seqRaw !== null) {
            try {
                stored = decodeU64Record('writeSeq', writeSeqKey, seqRaw);
            }
            catch (err) {
                lostTail = `the raft write sequence record is corrupt (${err.message})`;
            }
        }
        let markerSeq = 0;
        const marker = await o.cell.read();
        const m = marker.state === 'ok' ? decodeMarker(marker.payload) : undefined;
        if (marker.state === 'missing')
            lostTail ??= 'the raft marker file is missing (deleted, or lost with the file system): whether raft writes were lost cannot be told';
        else if (marker.state === 'corrupt')
            lostTail ??= `the raft marker file is corrupt (${marker.reason})`;
        else if (m === undefined)
            lostTail ??= 'the raft marker file holds no sequence number';
        else if (m.diskId !== identity.diskId)
            lostTail ??= `the raft marker file belongs to another data directory (disk ${m.diskId}, this one is ${identity.diskId})`;
        else {
            markerSeq = m.seq;
            if (m.seq > stored) {
                lostTail ??= `RocksDB holds raft writes up to #${stored}, but write #${m.seq} was durable before: the end of its write-ahead log was lost (point-in-time recovery stops at the first corrupt record)`;
            }
        }
        const disk = new NodeDisk(o, identity, Math.max(stored, markerSeq), lostTail, 'opened');
        if (lostTail !== undefined)
            await disk.#markAllDamaged(lostTail);
        return disk;
    }
    static async #initialise(o) {
        const legacy = (await groupsWithState(o.kv)).length > 0;
        // A marker naming a durable raft write, with no identity in the KV: the KV lost its identity and
        // every raft write after it (see the header). 0 is what an initialisation that stopped before
        // writing the identity leaves.
        const before = await o.cell.read();
        const marked = before.state === 'ok' ? decodeMarker(before.payload) : undefined;
        const lost = marked !== undefined && marked.seq > 0
            ? `the data directory has no identity, but its raft marker says raft write #${marked.seq} was durable: RocksDB lost its write-ahead log from its start (point-in-time recovery stops at the first corrupt record)`
            : before.state === 'corrupt'
                ? `the data directory has no identity, and its raft marker is corrupt (${before.reason}): raft writes may have been lost with the identity`
                : undefined;
        const identity = { nodeId: o.self, diskId: o.newId(), clusterId: legacy ? legacyClusterId : '', founders: [], ...(lost === undefined ? {} : { lostRaftState: lost }) };
        // Numbering goes on above the lost writes, and the marker keeps their number until the identity
        // that records the loss is written: a crash in between finds the loss again.
        const seq = lost === undefined ? 0 : (marked?.seq ?? 0);
        // The marker first (see the header): a directory with an identity always had one.
        await o.cell.write(encodeMarker(seq, identity.diskId));
        // Collected first (the rewrite reads the KV), written below in one atomic batch with the identity.
        const rewritten = legacy ? await rewriteLegacy(o.kv) : { ops: [], records: 0, damaged: [] };
        await o.kv.write((b) => {
            for (const [k, v] of rewritten.ops) {
                if (v === undefined)
                    b.del(k);
                else
                    b.put(k, v);
            }
            b.put(writeSeqKey, encodeU64Record('writeSeq', writeSeqKey, seq));
            b.put(nodeIdentityKey, encodeIdentity(identity));
        }, { durable: true });
        if (lost !== undefined) {
            o.logger.error({ diskId: identity.diskId, reason: lost }, 'raft state on this node was lost with the data directory\'s identity: it joins its cluster as a new, empty member, and its raft groups will not vote or lead until a healthy leader has repaired them');
        }
        else if (legacy) {
            o.logger.info({ diskId: identity.diskId, records: rewritten.records, damagedGroups: rewritten.damaged }, 'rewrote the raft log of a data directory from before record checksums in the checksummed format');
        }
        else {
            o.logger.info({ diskId: identity.diskId }, 'initialised an empty data directory');
        }
        return new NodeDisk(o, identity, seq, lost, legacy ? 'migrated' : 'created');
    }
    get identity() {
        return this.#identity;
    }
    /** Records (durably) the cluster this node founded or joined. */
    async setCluster(clusterId, founders) {
        assert(clusterId !== '', 'an empty cluster id');
        const next = { ...this.#identity, clusterId, founders: [...founders] };
        await this.#kv.write((b) => b.put(nodeIdentityKey, encodeIdentity(next)), { durable: true });
        this.#identity = next;
    }
    /**
     * Adds the next raft write sequence number to `b` (every raft write does, in its own batch) and
     * returns it; report it to durable() once the write is durable.
     */
    stamp(b) {
        const seq = ++this.#seq;
        b.put(writeSeqKey, encodeU64Record('writeSeq', writeSeqKey, seq));
        return seq;
    }
    /** Raft write `seq` is durable: the marker follows (one marker write in flight at a time). */
    durable(seq) {
        if (seq <= this.#durable)
            return;
        this.#durable = seq;
        this.#marking ??= this.#mark();
    }
    async #mark() {
        try {
            while (this.#marked < this.#durable) {
                const seq = this.#durable;
                try {
                    await this.#cell.write(encodeMarker(seq, this.#identity.diskId));
                    this.#marked = seq;
                }
                catch (err) {
                    // A marker that lags only weakens the check at the next start (it never makes a healthy
                    // log look damaged), so the node goes on; the next durable write tries again.
                    this.#log.error({ err: err.message, seq }, 'writing the raft marker failed; the lost-tail check at the next start will be weaker');
                    return;
                }
            }
        }
        finally {
            this.#marking = undefined;
        }
    }
    /** Resolves once the marker holds every sequence number reported durable so far. */
    async flush() {
        while (this.#marking !== undefined)
            await this.#marking;
        if (this.#marked < this.#durable) {
            this.#marking = this.#mark();
            await this.#marking;
        }
    }
    async close() {
        await this.flush();
        await this.#cell.close();
    }
    /**
     * Marks every group with state damaged, and records the loss in the identity (for groups that lost
     * every record), in one durable write, and moves the marker on.
     */
    async #markAllDamaged(reason) {
        const groups = await groupsWithState(this.#kv);
        const marks = [];
        for (const g of groups) {
            const dk = groupKey(g, kindDamage);
            if ((await this.#kv.get(dk)) !== null)
                continue; // already damaged: the first reason stands
            marks.push([dk, encodeDamageRecord(dk, { term: await this.#storedTerm(g), index: await this.#lastStoredIndex(g), reason })]);
        }
        const identity = { ...this.#identity, lostRaftState: this.#identity.lostRaftState ?? reason };
        let seq = 0;
        await this.#kv.write((b) => {
            for (const [k, v] of marks)
                b.put(k, v);
            b.put(nodeIdentityKey, encodeIdentity(identity));
            seq = this.stamp(b);
        }, { durable: true });
        this.#identity = identity;
        this.durable(seq);
        await this.flush();
        this.#log.error({ reason, groups }, 'raft state on this node is damaged: its raft groups will not vote or lead until a healthy leader has repaired them');
    }
    async #storedTerm(group) {
        const k = groupKey(group, kindHardState);
        const raw = await this.#kv.get(k);
        if (raw === null)
            return 0;
        try {
            return decodeHardStateRecord(k, raw).term;
        }
        catch {
            return 0;
        }
    }
    async #lastStoredIndex(group) {
        for await (const [k] of this.#kv.iterate({ gte: groupKey(group, kindEntry), lt: groupKey(group, kindEntry + 1), reverse: true, limit: 1 }))
            return entryKeyIndex(k);
        return 0;
    }
}
//# sourceMappingURL=node-disk.js.map