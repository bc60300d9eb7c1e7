// Goal: the fast date-time and uuid checks answer exactly as ajv-formats' own (they only skip its work
// for the common shape), and the validators use them. Method: properties over strings built near the
// shapes (valid values, then characters replaced, dropped or added, and arbitrary text) with ajv-formats'
// functions as the model; examples of each edge (leap years and seconds, offsets, case, separators).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import { commonDateTime, commonUuid, withFastPath } from './fast-formats.js';
import { createAjv } from './schema-compiler.js';

const require = createRequire(import.meta.url);
const { fullFormats } = require('ajv-formats/dist/formats.js') as { fullFormats: Record<string, { validate: (s: string) => boolean } | RegExp> };
const modelDateTime = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;
const uuidRe = fullFormats['uuid'] as RegExp;
const modelUuid = (s: string) => uuidRe.test(s);
const fastDateTime = withFastPath(commonDateTime, modelDateTime);
const fastUuid = withFastPath(commonUuid, modelUuid);

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const dateTimeText = fc
  .record({
    y: fc.integer({ min: 0, max: 9999 }),
    mo: fc.integer({ min: 0, max: 13 }),
    d: fc.integer({ min: 0, max: 32 }),
    h: fc.integer({ min: 0, max: 25 }),
    mi: fc.integer({ min: 0, max: 61 }),
    s: fc.integer({ min: 0, max: 61 }),
    frac: fc.constantFrom('', '.1', '.123', '.000001', '.'),
    sep: fc.constantFrom('T', 'T', 't', ' ', '\u00a0', 'x'),
    tz: fc.constantFrom('Z', 'z', '+01:00', '-05:30', '+23:59', '+24:00', '-00:60', '+0100', '+01', '', '+1:00'),
  })
  .map((r) => `${pad(r.y, 4)}-${pad(r.mo, 2)}-${pad(r.d, 2)}${r.sep}${pad(r.h, 2)}:${pad(r.mi, 2)}:${pad(r.s, 2)}${r.frac}${r.tz}`);
const uuidText = fc.uuid().chain((u) => fc.constantFrom(u, u.toUpperCase(), `urn:uuid:${u}`, u.slice(1), `${u}0`, u.replace('-', 'g'), u.replace(/-/g, '')));
/** A string with one character replaced, dropped or inserted (the near misses of a shape). */
const mutated = (base: fc.Arbitrary<string>) =>
  fc.tuple(base, fc.nat(), fc.constantFrom('replace', 'drop', 'insert', 'none'), fc.constantFrom('0', '9', '-', ':', 'T', 't', ' ', 'Z', '.', '+', 'a', 'G', '\n', '٣', '\u2028')).map(([s, at, how, c]) => {
    const i = s.length === 0 ? 0 : at % s.length;
    if (how === 'replace') return s.slice(0, i) + c + s.slice(i + 1);
    if (how === 'drop') return s.slice(0, i) + s.slice(i + 1);
    if (how === 'insert') return s.slice(0, i) + c + s.slice(i);
    return s;
  });

test('property: date-time answers as ajv-formats does, for values near the shape and arbitrary text', () => {
  fc.assert(
    fc.property(fc.oneof(mutated(dateTimeText), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 })), (s) => {
      assert.equal(fastDateTime(s), modelDateTime(s), JSON.stringify(s));
      if (commonDateTime(s)) assert.equal(modelDateTime(s), true, `fast path said yes: ${JSON.stringify(s)}`);
    }),
    { numRuns: 20000, seed: 2711 },
  );
});

test('property: uuid answers as ajv-formats does', () => {
  fc.assert(
    fc.property(fc.oneof(mutated(uuidText), fc.string({ maxLength: 40 })), (s) => {
      assert.equal(fastUuid(s), modelUuid(s), JSON.stringify(s));
      if (commonUuid(s)) assert.equal(modelUuid(s), true, `fast path said yes: ${JSON.stringify(s)}`);
    }),
    { numRuns: 20000, seed: 2712 },
  );
});

test('date-time edges: leap years, leap seconds, offsets, separators', () => {
  const cases: [string, boolean][] = [
    ['2024-02-29T00:00:00Z', true],
    ['2023-02-29T00:00:00Z', false],
    ['2000-02-29T12:00:00.5+01:00', true],
    ['1900-02-29T12:00:00Z', false],
    ['2026-11-27T23:59:60Z', true], // a leap second: ajv-formats' own check decides
    ['2026-11-27T22:59:60-01:00', true],
    ['2026-11-27T12:59:60Z', false],
    ['2026-11-27t16:20:01Z', true],
    ['2026-11-27 16:20:01Z', true],
    ['2026-11-27T16:20:01', false],
    ['2026-11-27T16:20:01+0100', true],
    ['2026-11-27T16:20:01+24:00', false],
    ['2026-11-27T24:00:00Z', false],
    ['2026-13-01T00:00:00Z', false],
    ['2026-11-27T16:20:01.Z', false],
  ];
  for (const [s, expected] of cases) {
    assert.equal(modelDateTime(s), expected, `model: ${s}`);
    assert.equal(fastDateTime(s), expected, s);
  }
});

test('the validators use the fast checks (and still answer as before)', () => {
  const ajv = createAjv();
  const v = ajv.compile({ type: 'object', properties: { at: { type: 'string', format: 'date-time' }, id: { type: 'string', format: 'uuid' } } });
  assert.equal(v({ at: '2026-11-27T16:20:01.123Z', id: '6f1c1e8e-4a3b-4c5d-9e8f-0123456789ab' }), true);
  assert.equal(v({ at: '2026-02-30T16:20:01Z' }), false);
  assert.equal(v({ id: 'urn:uuid:6f1c1e8e-4a3b-4c5d-9e8f-0123456789ab' }), true);
  assert.equal(v({ id: '6f1c1e8e-4a3b-4c5d-9e8f-0123456789ag' }), false);
  const formats = ajv.formats as Record<string, unknown>;
  assert.ok(typeof formats['uuid'] === 'function', 'uuid is the fast check, not ajv-formats RegExp');
  assert.ok((formats['date-time'] as { validate: unknown }).validate !== modelDateTime, 'date-time is the fast check');
});
