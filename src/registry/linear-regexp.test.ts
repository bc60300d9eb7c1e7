// Goal (issue 10): schema patterns run in linear time with ECMAScript's meaning. The linear engine
// agrees with V8's (u flag) on every pattern it accepts; the patterns that froze a node (nested
// quantifiers) answer at once; what RE2 cannot run in linear time (backreferences, lookaround, large
// counted repetition) and what is not ECMAScript is refused with a reason.
// Method: a property over generated patterns and strings against `new RegExp(p, 'u')` as the model
// (patterns and strings are small, so the backtracking model stays fast); examples for each
// translation and refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { linearRegExp, re2RegExp, UnsupportedPatternError } from './linear-regexp.js';

/** Pieces of ECMAScript patterns whose translation matters, and plain ones. */
const atom = fc.constantFrom(
  'a', 'b', 'é', '😀', ' ', '-', '\\.', '.', '\\s', '\\S', '\\d', '\\D', '\\w', '\\W',
  '[ab]', '[^a]', '[a-c]', '[\\s]', '[\\S]', '[^\\s]', '[\\sa]', '[\\d\\-]', '[.]', '[\\b]', '[^]', '[]', '[[]',
  '\\u0061', '\\u{1F600}', '\\uD83D\\uDE00', '\\x62', '\\cJ', '\\0', '\\n', '\\r', '\\t', '\\v', '\\f', '\\/', '\\u2028',
  '\\p{L}', '\\P{L}', '\\p{Lu}',
);
const quantifier = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?');
const piece = fc.tuple(atom, quantifier).map(([a, q]) => a + q);
const sequence = fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join(''));
const pattern = fc
  .tuple(fc.constantFrom('', '^'), fc.array(sequence, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '$'), fc.boolean())
  .map(([start, alts, end, group]) => start + (group ? `(?:${alts.join('|')})` : alts.join('|')) + end);
const input = fc
  .array(fc.constantFrom('a', 'b', 'c', 'é', '😀', ' ', '\u00a0', '\u2003', '\ufeff', '\n', '\r', '\u2028', '\t', '\v', '\b', '-', '.', '/', '1', '_', 'A', '\0'), { maxLength: 12 })
  .map((cs) => cs.join(''));

test('property: the linear engine answers as V8 does (u flag) for every pattern it accepts', () => {
  fc.assert(
    fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 8 }), (p, inputs) => {
      let model: RegExp;
      try {
        model = new RegExp(p, 'u');
      } catch {
        // Not ECMAScript (a quantified assertion such as ^*): refused by both, not this property's business.
        fc.pre(false);
        return;
      }
      // RE2 for every pattern (the translation), and the engine linearRegExp picks (V8 for backtrack-free ones).
      const re2 = re2RegExp(p);
      const linear = linearRegExp(p);
      for (const s of inputs) {
        assert.equal(re2.test(s), model.test(s), `RE2: pattern ${JSON.stringify(p)} on ${JSON.stringify(s)}`);
        assert.equal(linear.test(s), model.test(s), `pattern ${JSON.stringify(p)} on ${JSON.stringify(s)}`);
      }
    }),
    { numRuns: 2000, seed: 1010 },
  );
});

test('translations keep ECMAScript meaning: \\s is Unicode white space, . excludes \\r and U+2028, escapes of code points', () => {
  const cases: [string, string, boolean][] = [
    ['^\\s$', '\u00a0', true],
    ['^\\s$', '\ufeff', true],
    ['^\\S$', '\u3000', false],
    ['^.$', '\r', false],
    ['^.$', '\u2028', false],
    ['^.$', '😀', true],
    ['^\\u{1F600}$', '😀', true],
    ['^\\uD83D\\uDE00$', '😀', true],
    ['^[\\u0041-\\u0043]+$', 'ABC', true],
    ['^\\cJ$', '\n', true],
    ['^[\\b]$', '\b', true],
    ['^[^]$', '\n', true],
    ['[]', 'anything', false],
    ['^[[:]+$', '[:', true],
    ['^a$', 'a\n', false],
  ];
  for (const [p, s, expected] of cases) {
    assert.equal(new RegExp(p, 'u').test(s), expected, `model: ${p}`);
    assert.equal(re2RegExp(p).test(s), expected, `RE2: ${p} on ${JSON.stringify(s)}`);
    assert.equal(linearRegExp(p).test(s), expected, `${p} on ${JSON.stringify(s)}`);
  }
});

test('issue 10: patterns that backtrack exponentially in V8 answer at once (hang detector: one test bound)', { timeout: 20_000 }, () => {
  const long = 'a'.repeat(100_000) + '!';
  for (const p of ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '(x+x+)+y', '^([a-z]+)*[0-9]$']) {
    const re = linearRegExp(p);
    assert.equal(re.test('a'.repeat(30) + '!'), false, p);
    assert.equal(re.test(long), false, p);
  }
  assert.equal(linearRegExp('^(a+)+$').test('a'.repeat(30)), true);
});

test('what RE2 cannot run in linear time is refused with the reason', () => {
  const refused: [string, RegExp][] = [
    ['(a)\\1', /backreference/],
    ['(?<n>a)\\k<n>', /backreference/],
    ['a(?=b)', /lookahead and lookbehind/],
    ['a(?!b)', /lookahead and lookbehind/],
    ['(?<=a)b', /lookahead and lookbehind/],
    ['(?<!a)b', /lookahead and lookbehind/],
    ['a{1001}', /linear-time engine/],
    ['\\p{Script=Greek}', /linear-time engine/],
  ];
  for (const [p, reason] of refused) {
    assert.throws(() => linearRegExp(p), (err: unknown) => err instanceof UnsupportedPatternError && reason.test(err.message) && err.message.includes(JSON.stringify(p)), p);
  }
});

test('a pattern that is not ECMAScript (u flag) is refused, also when RE2 would take it', () => {
  for (const p of ['(', '[a-', '(?i)a', '\\z', '\\Qa\\E', '\\-', 'a{', '\\e']) {
    assert.throws(() => linearRegExp(p), (err: unknown) => err instanceof UnsupportedPatternError && /not a valid ECMAScript regular expression/.test(err.message), p);
  }
});
