/**
 * The Raft records of data directories written before the checksummed format (raft-records.ts):
 * protobuf messages Entry, HardState and Snapshot of proto/raft.proto at that time, without a
 * checksum. They are read once, when such a directory is first opened by this version, and rewritten
 * in the current format in the same atomic write that gives the directory its identity
 * (node-disk.ts). Nothing writes this format any more.
 *
 * The three messages are declared here rather than loaded from proto/raft.proto, so that what is on
 * old disks stays readable whatever becomes of the wire contract (field numbers as they were).
 */
import protobuf from 'protobufjs';
import { decodeConfChange } from '../raft/index.js';
import { RaftRecordCorruptError } from './raft-records.js';
const root = protobuf.Root.fromJSON({
    nested: {
        EntryType: { values: { ENTRY_TYPE_NORMAL: 0, ENTRY_TYPE_CONF_CHANGE: 1 } },
        Entry: { fields: { term: { type: 'uint64', id: 1 }, index: { type: 'uint64', id: 2 }, type: { type: 'EntryType', id: 3 }, data: { type: 'bytes', id: 4 } } },
        HardState: { fields: { term: { type: 'uint64', id: 1 }, vote: { type: 'uint64', id: 2 }, commit: { type: 'uint64', id: 3 } } },
        ConfState: { fields: { voters: { rule: 'repeated', type: 'uint64', id: 1 }, learners: { rule: 'repeated', type: 'uint64', id: 2 } } },
        SnapshotMetadata: { fields: { index: { type: 'uint64', id: 1 }, term: { type: 'uint64', id: 2 }, conf_state: { type: 'ConfState', id: 3 } } },
        Snapshot: { fields: { metadata: { type: 'SnapshotMetadata', id: 1 }, data: { type: 'bytes', id: 2 } } },
    },
});
// Bytes stay as the decoder's buffers (the default), copied below.
const toObject = { longs: String, enums: String, defaults: true, arrays: true };
function parse(type, key, value) {
    const t = root.lookupType(type);
    try {
        return t.toObject(t.decode(value), toObject);
    }
    catch (err) {
        throw new RaftRecordCorruptError(key, `not a protobuf ${type} of the pre-checksum format (${err.message})`);
    }
}
function u64(key, v, what) {
    const n = Number(v);
    if (typeof v !== 'string' || !/^\d+$/.test(v) || !Number.isSafeInteger(n))
        throw new RaftRecordCorruptError(key, `${what}: not a uint64 below 2^53: ${String(v)}`);
    return n;
}
function bytes(v) {
    return new Uint8Array(v);
}
export function decodeLegacyEntry(key, value) {
    const w = parse('Entry', key, value);
    const index = u64(key, w['index'], 'entry.index');
    const data = bytes(w['data']);
    if (w['type'] === 'ENTRY_TYPE_CONF_CHANGE') {
        try {
            decodeConfChange(data);
        }
        catch (err) {
            throw new RaftRecordCorruptError(key, `conf change entry ${index} does not decode (${err.message})`);
        }
        return { term: u64(key, w['term'], 'entry.term'), index, type: 'confChange', data };
    }
    if (w['type'] !== 'ENTRY_TYPE_NORMAL')
        throw new RaftRecordCorruptError(key, `entry.type: unknown ${String(w['type'])}`);
    return { term: u64(key, w['term'], 'entry.term'), index, type: 'normal', data };
}
export function decodeLegacyHardState(key, value) {
    const w = parse('HardState', key, value);
    return { term: u64(key, w['term'], 'hardState.term'), vote: u64(key, w['vote'], 'hardState.vote'), commit: u64(key, w['commit'], 'hardState.commit') };
}
export function decodeLegacySnapshot(key, value) {
    const w = parse('Snapshot', key, value);
    const md = w['metadata'];
    const cs = md?.['conf_state'];
    if (md === null || md === undefined || cs === null || cs === undefined)
        throw new RaftRecordCorruptError(key, 'snapshot without metadata');
    const ids = (v, what) => v.map((x, i) => u64(key, x, `${what}[${i}]`));
    return {
        metadata: {
            index: u64(key, md['index'], 'snapshot.metadata.index'),
            term: u64(key, md['term'], 'snapshot.metadata.term'),
            confState: { voters: ids(cs['voters'], 'voters'), learners: ids(cs['learners'], 'learners') },
        },
        data: bytes(w['data']),
    };
}
//# sourceMappingURL=raft-legacy-records.js.map