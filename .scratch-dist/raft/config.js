/**
 * How a Raft node is set up. Every limit is explicit and named with its unit last; `withDefaults`
 * fills the ones a host leaves out and `validateConfig` asserts the relations between them.
 */
import { assert } from '../core/assert.js';
import { assertIndex, assertNodeId } from './types.js';
export function withDefaults(c) {
    return {
        applied: 0,
        preVote: true,
        checkQuorum: true,
        appendBytesMax: 1024 * 1024,
        appendEntriesMax: 4096,
        inflightAppendsMax: 256,
        inflightBytesMax: 32 * 1024 * 1024,
        uncommittedBytesMax: 64 * 1024 * 1024,
        readyCommittedBytesMax: 64 * 1024 * 1024,
        pendingReadsMax: 4096,
        snapshotRetryTicks: 4 * c.electionTicks,
        damaged: null,
        ...stripUndefined(c),
    };
}
function stripUndefined(o) {
    return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
export function validateConfig(c) {
    assertNodeId(c.id, 'raft config id');
    assertIndex(c.applied, 'raft config applied');
    const positive = [
        ['electionTicks', c.electionTicks],
        ['heartbeatTicks', c.heartbeatTicks],
        ['appendBytesMax', c.appendBytesMax],
        ['appendEntriesMax', c.appendEntriesMax],
        ['inflightAppendsMax', c.inflightAppendsMax],
        ['inflightBytesMax', c.inflightBytesMax],
        ['uncommittedBytesMax', c.uncommittedBytesMax],
        ['readyCommittedBytesMax', c.readyCommittedBytesMax],
        ['pendingReadsMax', c.pendingReadsMax],
        ['snapshotRetryTicks', c.snapshotRetryTicks],
    ];
    for (const [name, v] of positive) {
        assert(Number.isSafeInteger(v) && v > 0, `raft config ${name} must be a positive integer, got ${v}`);
    }
    assert(c.electionTicks > c.heartbeatTicks, 'electionTicks must exceed heartbeatTicks');
    assert(c.inflightBytesMax >= c.appendBytesMax, 'an append of appendBytesMax must fit the inflight window');
    if (c.damaged !== null) {
        assertIndex(c.damaged.term, 'raft config damaged.term');
        assertIndex(c.damaged.index, 'raft config damaged.index');
    }
}
//# sourceMappingURL=config.js.map