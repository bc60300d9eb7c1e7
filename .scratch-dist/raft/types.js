/**
 * The values that cross the boundary of the Raft core: log entries, messages between peers, the
 * durable hard state, snapshots and cluster configurations.
 *
 * Terms and indexes are plain JavaScript numbers. They are exact up to 2^53 (about 9e15: a million
 * entries a second for 285 years), and the core asserts that every term and index it accepts is a
 * safe, non-negative integer. Node ids are positive safe integers; 0 means "no node" (no leader, no
 * vote).
 *
 * Every value here is treated as immutable once it has been handed over: the core never mutates a
 * message or an entry it received or emitted, so the host and the simulator may share them freely.
 */
import { assert } from '../core/assert.js';
/** The absent node: no leader known, no vote cast. */
export const noNode = 0;
export const emptyHardState = { term: 0, vote: noNode, commit: 0 };
export const emptySnapshot = {
    metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } },
    data: new Uint8Array(0),
};
/** The context a candidate puts on its votes when a leadership transfer told it to campaign. */
export const campaignTransfer = 'campaignTransfer';
/**
 * The context of the heartbeats by which a leader tells its followers that it quiesces: nothing is
 * under way, every member holds and has committed the whole log, and it sends no more heartbeats
 * until something wakes it (Raft.quiesce).
 */
export const quiesceContext = 'quiesce';
/**
 * The context a damaged member puts on its append rejections: its log may be shorter than the
 * leader's progress says (it lost entries it had acknowledged), so the leader forgets that member's
 * match and probes from its hint instead of taking the rejection for a stale one.
 */
export const damagedReject = 'damaged';
/** Asserts that a term, an index or a count is a safe non-negative integer. */
export function assertIndex(n, what) {
    assert(Number.isSafeInteger(n), `${what} is not a safe integer: ${n}`);
    assert(n >= 0, `${what} is negative: ${n}`);
}
export function assertNodeId(id, what) {
    assert(Number.isSafeInteger(id), `${what} is not a safe integer: ${id}`);
    assert(id > 0, `${what} must be positive: ${id}`);
}
/** Bytes an entry counts for in size limits: its payload (the fixed fields are small and bounded). */
export function entryBytes(e) {
    return e.data.byteLength;
}
export function entriesBytes(es) {
    let total = 0;
    for (const e of es)
        total += e.data.byteLength;
    return total;
}
export function isHardStateEqual(a, b) {
    return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}
export function isEmptySnapshot(s) {
    return s === undefined || s.metadata.index === 0;
}
/** Builds a message, filling every field the sender leaves out with its zero value. */
export function makeMessage(fields) {
    return {
        logTerm: 0,
        index: 0,
        entries: [],
        commit: 0,
        reject: false,
        rejectHint: 0,
        context: '',
        snapshot: undefined,
        ...fields,
    };
}
//# sourceMappingURL=types.js.map