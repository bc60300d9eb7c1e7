// Goal: a schema pattern runs on V8's engine only when V8 runs it in linear time (backtrack-free.ts),
// so the speed of the common fixed-format patterns costs nothing of the linear-time guarantee of
// issue 10. Method: the classification on examples of each rule and of each way out of it; the patterns
// it accepts run on V8 (linearRegExp gives a RegExp) and answer at once on long adversarial inputs
// (hang detector: the test's timeout); the ones it refuses would not (they stay on RE2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backtrackFree } from './backtrack-free.js';
import { linearRegExp } from './linear-regexp.js';

const accepted = [
  '^ORD-[0-9]{10}$', // the bench's schema
  '^[A-Z]{2}$',
  'abc',
  '[a-z]{3}-\\d{4}',
  '^(?:ab){3}$', // an exact repetition of a group chooses nothing
  '^((a)b){2}c$',
  '^[a-z0-9-]+$', // one repetition, anchored, of a class
  '^\\d+-\\d{4}$',
  '^\\p{L}*x$',
  '^a{2,}b$',
  '^a{1,5}?b$',
  '^\\u{1F600}+$',
  '^😀?$',
  '^[\\]+*]+x$', // syntax characters inside a class are not repetitions
  '^a{3,3}b+$', // {n,n} is exact
  '\\bword\\b',
];
const refused = [
  '^(a+)+$', // nested repetition
  '^(a|a)*$', // alternation
  'a|b',
  'a+b', // not anchored: tried from every start position
  '[a-z]+x',
  '^a*a*b', // two repetitions that choose
  '^[a-z]+[0-9]?$',
  '^(ab)*$', // a repetition of a group
  '^(?:a+)b', // a repetition inside a group
  '(^a+)', // the anchor inside a group
  '^a+(b)\\1', // a backreference
  '^a(?=b)c+', // lookaround
  '^[a-z]+(?<!x)',
];

test('backtrackFree: fixed formats and one anchored repetition of a single character qualify', () => {
  for (const p of accepted) assert.equal(backtrackFree(p), true, p);
});

test('backtrackFree: alternation, nesting, two choices, no anchor, groups repeated, lookaround and backreferences do not', () => {
  for (const p of refused) assert.equal(backtrackFree(p), false, p);
});

test('patterns that qualify run on V8 and answer at once on long inputs that defeat them (hang detector)', { timeout: 20_000 }, () => {
  const long = 'a'.repeat(200_000);
  for (const p of accepted) {
    let re;
    try {
      re = linearRegExp(p);
    } catch {
      continue; // \\b etc. that RE2 refuses would never reach V8
    }
    assert.ok(re instanceof RegExp, `${p} runs on V8`);
    for (const s of [long, `${long}!`, `-${long}`, '1'.repeat(200_000) + 'x', `${'ab'.repeat(100_000)}!`]) re.test(s);
  }
  // The ones that do not qualify stay on RE2 (V8 would take seconds to years on these inputs).
  for (const p of ['^(a+)+$', 'a+b', '^a*a*b', '^(ab)*$']) assert.ok(!(linearRegExp(p) instanceof RegExp), `${p} stays on RE2`);
  assert.equal(linearRegExp('^[a-z0-9-]+$').test('order-17'), true);
  assert.equal(linearRegExp('^ORD-[0-9]{10}$').test('ORD-123456789'), false);
});
