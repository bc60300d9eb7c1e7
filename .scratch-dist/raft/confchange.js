/**
 * Membership changes: their wire form inside a log entry, and their effect on a ConfState.
 *
 * Brook changes membership one server at a time (Ongaro's thesis §4.1): any two consecutive
 * configurations then share a majority, so no joint consensus is needed. A change takes effect when
 * it is applied (as in etcd), and the leader refuses a new change until the previous one is applied.
 * Together with "a node with an unapplied committed change does not campaign" this keeps every
 * node's configuration within one step of the newest committed one.
 *
 * The entry payload format is versioned and append-only: byte 0 is the format version (1), byte 1
 * the change type code (codes are never reused), bytes 2..9 the node id as a big-endian float64
 * (node ids are safe integers, which float64 holds exactly).
 */
import { assert } from '../core/assert.js';
import { assertNodeId } from './types.js';
const formatVersion = 1;
const encodedBytes = 10;
const typeCodes = { addVoter: 1, addLearner: 2, removeNode: 3 };
const typesByCode = { 1: 'addVoter', 2: 'addLearner', 3: 'removeNode' };
export function encodeConfChange(cc) {
    assertNodeId(cc.nodeId, 'conf change node id');
    const bytes = new Uint8Array(encodedBytes);
    const view = new DataView(bytes.buffer);
    view.setUint8(0, formatVersion);
    view.setUint8(1, typeCodes[cc.type]);
    view.setFloat64(2, cc.nodeId, false);
    return bytes;
}
/**
 * Decodes a ConfChange. Entries are written only by a leader of this group, so a payload that does
 * not decode means corruption that escaped the storage checksums: an invariant violation.
 */
export function decodeConfChange(data) {
    assert(data.byteLength === encodedBytes, `conf change payload has ${data.byteLength} bytes`);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    assert(view.getUint8(0) === formatVersion, `conf change format version ${view.getUint8(0)}`);
    const type = typesByCode[view.getUint8(1)];
    assert(type !== undefined, `conf change type code ${view.getUint8(1)}`);
    const nodeId = view.getFloat64(2, false);
    assertNodeId(nodeId, 'decoded conf change node id');
    return { type, nodeId };
}
function sortedWith(ids, id) {
    return ids.includes(id) ? [...ids] : [...ids, id].sort((a, b) => a - b);
}
function sortedWithout(ids, id) {
    return ids.filter((x) => x !== id);
}
/**
 * The configuration after applying `cc` to `conf`. Pure and total: a change that is already in
 * effect (adding a voter twice, removing an absent node) leaves the configuration unchanged, because
 * the same committed entry is applied by every replica and must have the same effect everywhere.
 */
export function applyConfChangeToState(conf, cc) {
    assertNodeId(cc.nodeId, 'conf change node id');
    switch (cc.type) {
        case 'addVoter':
            return { voters: sortedWith(conf.voters, cc.nodeId), learners: sortedWithout(conf.learners, cc.nodeId) };
        case 'addLearner':
            return { voters: sortedWithout(conf.voters, cc.nodeId), learners: sortedWith(conf.learners, cc.nodeId) };
        case 'removeNode':
            return { voters: sortedWithout(conf.voters, cc.nodeId), learners: sortedWithout(conf.learners, cc.nodeId) };
    }
}
export function isConfStateEqual(a, b) {
    return (a.voters.length === b.voters.length &&
        a.learners.length === b.learners.length &&
        a.voters.every((v, i) => b.voters[i] === v) &&
        a.learners.every((v, i) => b.learners[i] === v));
}
/**
 * The initial durable state of a founding member of a new group: one committed `addVoter` entry per
 * founding voter at term 1, indexes 1..n, exactly as every founding member must write it. Replaying
 * these entries gives the founding configuration, so a node that joins later and catches up from
 * index 1 learns the same configuration as everyone else. Every founding member must be given the
 * same `voters` list; a node that joins later starts from empty storage instead.
 */
export function bootstrapState(voters) {
    assert(voters.length > 0, 'a group needs at least one founding voter');
    const sorted = [...voters].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) {
        assert(sorted[i] !== sorted[i - 1], `founding voter ${sorted[i]} listed twice`);
    }
    const entries = sorted.map((nodeId, i) => ({
        term: 1,
        index: i + 1,
        type: 'confChange',
        data: encodeConfChange({ type: 'addVoter', nodeId }),
    }));
    return { entries, hardState: { term: 1, vote: 0, commit: entries.length } };
}
//# sourceMappingURL=confchange.js.map