// Goal: the Problem catalog is well formed and Problems serialize to the wire format of compatibility.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { problems, problemStatus, reasonPhrase } from './problem.js';
test('every catalog entry has a 4xx/5xx status with a reason phrase', () => {
    for (const [code, status] of Object.entries(problemStatus)) {
        assert.ok(status >= 400 && status < 600, code);
        assert.notEqual(reasonPhrase(status), 'Error', `${code} -> ${status} lacks a reason phrase`);
    }
});
test('a Problem serializes as type/title/status/detail', () => {
    const p = problems.eventTypeNotFound('EventType "x" does not exist.');
    assert.deepEqual(p.toJSON(), {
        type: 'http://httpstatus.es/404',
        title: 'Not Found',
        status: 404,
        detail: 'EventType "x" does not exist.',
    });
});
test('detail is omitted when absent', () => {
    assert.deepEqual(Object.keys(problems.conflict().toJSON()).sort(), ['status', 'title', 'type']);
});
//# sourceMappingURL=problem.test.js.map