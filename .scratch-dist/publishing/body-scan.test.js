// Goal: element sizes are measured on the submitted text, including whitespace, for any valid array.
// Method: fast-check generates arrays of JSON values with random whitespace; sizes must equal the
// lengths of the pieces the generator joined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { topLevelElementSizes } from './body-scan.js';
test('sizes of hand-written examples', () => {
    assert.deepEqual(topLevelElementSizes(Buffer.from('[]')), []);
    assert.deepEqual(topLevelElementSizes(Buffer.from('[ ]')), []);
    assert.deepEqual(topLevelElementSizes(Buffer.from('[{"a":"x,]}"} , [1,2]]')), [13, 6]);
    assert.deepEqual(topLevelElementSizes(Buffer.from('["\\"",{"é":1}]')), [4, 8]);
});
test('sizes equal the generated pieces', () => {
    const ws = fc.constantFrom('', ' ', '\n', '\t ', '  \r\n');
    fc.assert(fc.property(fc.array(fc.tuple(ws, fc.jsonValue(), ws), { minLength: 1, maxLength: 8 }), (items) => {
        const pieces = items.map(([a, v, b]) => a + JSON.stringify(v) + b);
        const text = '[' + pieces.join(',') + ']';
        assert.deepEqual(topLevelElementSizes(Buffer.from(text)), pieces.map((p) => Buffer.byteLength(p)));
    }));
});
//# sourceMappingURL=body-scan.test.js.map