// Goal: a stored event is the submitted text, compacted, with the enrichment fields at the end of its
// metadata object: it means exactly what the re-serialized enriched object means (same JSON value),
// holds no line break outside strings (stream lines stay one per batch), keeps every digit of numbers
// JSON.parse would round, and elements that cannot be spliced are reported so the caller re-serializes.
// Method: examples, and fast-check over random events with random whitespace, compared with
// JSON.stringify of the same object enriched in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spliceElements, type SplicedElement } from './splice.js';

const text = (b: SplicedElement) => (typeof b === 'string' ? b : b.toString('utf8'));

test('examples: insertion, empty metadata, no additions, escapes, big integers, elements that cannot be spliced', () => {
  const body = Buffer.from(`[
    { "id" : 12345678901234567890, "metadata" : { "eid" : "e1" } , "note": "a\\"b\\n c" },
    {"metadata":{}},
    {"metadata":{"eid":"e3"}},
    {"x":1},
    {"metadata":{"a":1},"metadata":{"a":2}},
    {"meta\\u0064ata":{"a":1}},
    {"metadata":null}
  ]`);
  const add = '"event_type":"t","version":"1.0.0"';
  const r = spliceElements(body, [add, add, undefined, add, add, add, add]).map(text);
  assert.equal(r[0], '{"id":12345678901234567890,"metadata":{"eid":"e1","event_type":"t","version":"1.0.0"},"note":"a\\"b\\n c"}');
  assert.equal(r[1], '{"metadata":{"event_type":"t","version":"1.0.0"}}');
  assert.equal(r[2], '{"metadata":{"eid":"e3"}}', 'nothing to add: compacted only');
  assert.deepEqual(r.slice(3), ['unspliceable', 'unspliceable', 'unspliceable', 'unspliceable'], 'no metadata, repeated, escaped key, not an object');
  const deep = (d: number) => `{"metadata":{},"x":${'['.repeat(d)}${']'.repeat(d)}}`;
  assert.deepEqual(spliceElements(Buffer.from(`[${deep(9)},${deep(10)}]`), [undefined, undefined], 10).map(text), [deep(9), 'too_deep'], 'depth counts the element itself: 10 levels pass, 11 do not');
  assert.deepEqual(spliceElements(Buffer.from('[]'), []), []);
  // Added text is written as UTF-8, sized by its bytes, not its characters.
  assert.deepEqual(spliceElements(Buffer.from('[{"metadata":{}},{"metadata":{"a":1}}]'), ['"event_type":"ü€😀"', '"p":"é"']).map(text), ['{"metadata":{"event_type":"ü€😀"}}', '{"metadata":{"a":1,"p":"é"}}']);
  assert.deepEqual(spliceElements(Buffer.from(' [ 1 , "x" ,{"metadata":{}} ] '), [undefined, undefined, undefined]).map(text), ['1', '"x"', '{"metadata":{}}']);
});

const ws = fc.constantFrom('', ' ', '\n', '\t', ' \r\n ');
/** Pretty-prints a JSON value with random whitespace between tokens (never inside strings). */
function messy(v: unknown, pick: () => string): string {
  if (Array.isArray(v)) return `[${pick()}${v.map((x) => pick() + messy(x, pick) + pick()).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pick()}${JSON.stringify(k)}${pick()}:${pick()}${messy(x, pick)}${pick()}`);
    return `{${entries.join(',')}${pick()}}`;
  }
  return JSON.stringify(v);
}

test('property: the spliced text parses to the enriched object, on one line, for any event and whitespace', () => {
  const key = fc.string({ maxLength: 6 }).filter((k) => k !== 'metadata' && k !== '__proto__');
  const event = fc.record({
    before: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
    metadata: fc.dictionary(key.filter((k) => !['event_type', 'received_at', 'version', 'flow_id', 'partition'].includes(k)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    after: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
    flowId: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(event, { minLength: 1, maxLength: 5 }), fc.array(ws, { minLength: 1, maxLength: 7 }), (events, spaces) => {
      let n = 0;
      const pick = () => spaces[n++ % spaces.length]!;
      const objects = events.map((e) => ({ ...e.before, metadata: { ...e.metadata }, ...e.after }));
      const body = Buffer.from(`[${objects.map((o) => pick() + messy(o, pick) + pick()).join(',')}]`);
      const adds = events.map((e) => `"event_type":"t\\u00e9","received_at":"2026-01-01T00:00:00Z"${e.flowId === undefined ? '' : `,"flow_id":${JSON.stringify(e.flowId)}`}`);
      const out = spliceElements(body, adds);
      assert.equal(out.length, objects.length);
      out.forEach((b, i) => {
        assert.ok(typeof b !== 'string', 'spliced');
        const s = b.toString('utf8');
        assert.ok(!/[\n\r]/.test(s), 'no raw line break');
        const expected = JSON.parse(JSON.stringify(objects[i])) as { metadata: Record<string, unknown> };
        Object.assign(expected.metadata, { event_type: 'té', received_at: '2026-01-01T00:00:00Z' }, events[i]!.flowId === undefined ? {} : { flow_id: events[i]!.flowId });
        assert.deepEqual(JSON.parse(s), expected);
      });
    }),
    { numRuns: 300 },
  );
});
