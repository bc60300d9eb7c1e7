/**
 * Where Raft state lives in the shared ordered KV (prefixes are listed in src/log/keys.ts):
 *
 *   [0x02][group u32][0x01]              hard state
 *   [0x02][group u32][0x02]              snapshot
 *   [0x02][group u32][0x03][index u64]   log entry
 *   [0x02][group u32][0x04]              damage mark: this member must not vote or lead until repaired
 *   [0x03][0x01]                         the node's identity (node id, disk id, cluster id, founders)
 *   [0x03][0x02]                         the node's raft write sequence (see node-disk.ts)
 *
 * Integers are big-endian, so a group's entries sort by index and groups sort by number.
 */
import { assert } from '../core/assert.js';
export const prefixRaft = 0x02;
export const prefixNode = 0x03;
export const kindHardState = 0x01;
export const kindSnapshot = 0x02;
export const kindEntry = 0x03;
export const kindDamage = 0x04;
export const groupMax = 0xffff_ffff;
export function groupKey(group, kind) {
    assert(Number.isInteger(group) && group >= 0 && group <= groupMax, `raft group ${group}`);
    const k = Buffer.alloc(6);
    k[0] = prefixRaft;
    k.writeUInt32BE(group, 1);
    k[5] = kind;
    return k;
}
export function entryKey(group, index) {
    assert(Number.isSafeInteger(index) && index >= 0, `entry index ${index}`);
    const k = Buffer.alloc(14);
    k.set(groupKey(group, kindEntry));
    k.writeUInt32BE(Math.floor(index / 0x1_0000_0000), 6);
    k.writeUInt32BE(index % 0x1_0000_0000, 10);
    return k;
}
/** The index of an entry key. */
export function entryKeyIndex(key) {
    return key.readUInt32BE(6) * 0x1_0000_0000 + key.readUInt32BE(10);
}
/** The first key of `group` (and, for group + 1, the end of its range). */
export function groupStart(group) {
    const k = Buffer.alloc(5);
    k[0] = prefixRaft;
    k.writeUInt32BE(group, 1);
    return k;
}
/** The end of the whole raft range (exclusive). */
export const raftEnd = Buffer.from([prefixRaft + 1]);
export const nodeIdentityKey = Buffer.from([prefixNode, 0x01]);
export const writeSeqKey = Buffer.from([prefixNode, 0x02]);
//# sourceMappingURL=raft-keys.js.map