// Goal: the cursor codec round-trips every offset and rejects what is not a Brook offset.
// Method: fixed examples from compatibility.md plus fast-check round-trip and order properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatCursor, formatOffset, parseOffset, toOffset } from './offset.js';
test('formats the example of compatibility.md', () => {
    assert.equal(formatOffset(1, toOffset(41)), '001-0001-000000000000000041');
});
test('BEGIN is accepted in any case', () => {
    for (const s of ['BEGIN', 'begin', 'Begin'])
        assert.deepEqual(parseOffset(s), { kind: 'begin' });
});
test('an exclusive cursor before the first event is BEGIN', () => {
    assert.equal(formatCursor(1, toOffset(-1)), 'BEGIN');
    assert.equal(formatCursor(1, toOffset(0)), '001-0001-000000000000000000');
});
test('malformed offsets are rejected', () => {
    for (const s of ['', '42', '001-0001-41', '002-0001-000000000000000041', '001-0000-000000000000000001', '001-000g-000000000000000001', ' BEGIN', '001-0001-0000000000000000041']) {
        assert.equal(parseOffset(s), undefined, s);
    }
});
test('round trip and string order equals numeric order within a timeline', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 0xffff }), fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.nat({ max: Number.MAX_SAFE_INTEGER }), (tl, a, b) => {
        const sa = formatOffset(tl, toOffset(a));
        const sb = formatOffset(tl, toOffset(b));
        assert.deepEqual(parseOffset(sa), { kind: 'at', timeline: tl, offset: a });
        assert.equal(sa < sb, a < b);
    }));
});
//# sourceMappingURL=offset.test.js.map