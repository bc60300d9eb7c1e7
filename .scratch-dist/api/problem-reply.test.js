import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionUnavailableError, CorruptBatchError, StoreClosedError } from '../log/index.js';
import { toProblem } from './problem-reply.js';
test('storage errors of a partition this node cannot serve are retriable 503s, not internal errors', () => {
    for (const err of [new PartitionUnavailableError(1, 0, new Error('this node holds no replica of the partition')), new CorruptBatchError(1, 0, 5, 'bad crc'), new StoreClosedError()]) {
        const { problem, unexpected } = toProblem(err);
        assert.equal(unexpected, false, err.message);
        assert.equal(problem.status, 503, err.message);
        assert.match(problem.detail ?? '', /retry/);
    }
    assert.equal(toProblem(new Error('boom')).problem.status, 500, 'anything else stays an internal error');
});
//# sourceMappingURL=problem-reply.test.js.map