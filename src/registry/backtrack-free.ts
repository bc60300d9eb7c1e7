/**
 * Which schema patterns V8's own (backtracking) engine runs in linear time, so they need not pay for
 * the pure-JavaScript RE2 engine (re2js: about 0.5 µs per test of a short pattern, ten times V8, and
 * most of the validation CPU of a typical event; docs/benchmarks.md). A pattern qualifies when its
 * backtracking has at most one choice to undo, by structure:
 *
 * - no alternation (`|`) and no lookaround;
 * - every repetition is exact (`{n}`, `{n,n}`), which has nothing to choose: at each start position
 *   the match runs through the pattern once, O(m) for a pattern of m expanded positions; or
 * - at most one other repetition (`*`, `+`, `?`, `{n,}`, `{n,m}`, greedy or lazy), of a single
 *   character, class or escape, outside any group, in a pattern that starts with `^`: only start
 *   position 0 can match (without the m flag, `^` fails at once everywhere else), and there the one
 *   repetition has at most n + 1 lengths to try, each followed by an exact rest: O(n · m).
 *
 * Two repetitions that can choose (`^a*a*b`), one inside a repeated group or of a group (`^(ab)*`), or one
 * without the anchor (`a+b`, tried from every start position) can take polynomial or exponential time in
 * V8 and stay on RE2. The caller (linear-regexp.ts) has already checked the pattern is valid ECMAScript
 * (u flag) and that RE2 accepts it, which bounds nested exact repetition (at most 1000 in all) the way
 * it bounds RE2's own program, so m is the same order for both engines. Matching with `new RegExp(p,
 * 'u')` is ECMAScript's meaning itself, which the RE2 translation only reproduces.
 */

/** The length of the escape sequence starting at `at` (a backslash), in a valid u-mode pattern. */
function escapeLength(p: string, at: number): number {
  const c = p[at + 1];
  if ((c === 'u' && p[at + 2] === '{') || c === 'p' || c === 'P' || c === 'k') {
    const close = p.indexOf(c === 'k' ? '>' : '}', at);
    return close < 0 ? p.length - at : close + 1 - at;
  }
  if (c === 'u') return 6;
  if (c === 'x') return 4;
  if (c === 'c') return 3;
  // A surrogate pair written literally after a backslash is one code point (an identity escape is
  // only allowed for syntax characters in u mode, so this is for completeness).
  return 1 + (c !== undefined && c.codePointAt(0)! > 0xffff ? 2 : 1);
}

/** The index just after the character class starting at `at` (`[`): ECMAScript's `[]` and `[^]` close at once. */
function classEnd(p: string, at: number): number {
  let j = at + 1;
  if (p[j] === '^') j++;
  while (j < p.length) {
    if (p[j] === '\\') j += escapeLength(p, j);
    else if (p[j] === ']') return j + 1;
    else j++;
  }
  return j;
}

const repetition = /^\{(\d+)(,(\d*))?\}/;

/**
 * Whether V8's backtracking engine runs `pattern` (valid ECMAScript with the u flag) in time linear in
 * the input, by the rules above. False whenever in doubt.
 */
export function backtrackFree(pattern: string): boolean {
  const anchored = pattern.startsWith('^');
  let choices = 0;
  let depth = 0;
  /** What a repetition at this point would repeat. */
  let last: 'single' | 'group' | 'none' = 'none';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === 'k' || (e !== undefined && e >= '1' && e <= '9')) return false; // backreference
      last = e === 'b' || e === 'B' ? 'none' : 'single';
      i += escapeLength(pattern, i);
      continue;
    }
    if (c === '[') {
      i = classEnd(pattern, i);
      last = 'single';
      continue;
    }
    if (c === '(') {
      if (pattern[i + 1] === '?') {
        if (pattern[i + 2] === ':') i += 3;
        else if (pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') i = pattern.indexOf('>', i) + 1;
        else return false; // lookaround, or anything else this scanner does not know
      } else {
        i++;
      }
      depth++;
      last = 'none';
      continue;
    }
    if (c === ')') {
      depth--;
      i++;
      last = 'group';
      continue;
    }
    if (c === '|') return false;
    if (c === '^' || c === '$') {
      i++;
      last = 'none';
      continue;
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') {
      let exact = false;
      let j = i + 1;
      if (c === '{') {
        const m = repetition.exec(pattern.slice(i, i + 24));
        if (m === null) return false; // a lone brace is not valid in u mode; in doubt
        exact = m[2] === undefined || (m[3] !== '' && Number(m[3]) === Number(m[1]));
        j = i + m[0].length;
      }
      if (pattern[j] === '?') j++; // lazy: the same choices, tried in the other order
      if (!exact) {
        if (!anchored || depth > 0 || last !== 'single') return false;
        choices++;
        if (choices > 1) return false;
      }
      i = j;
      last = 'none';
      continue;
    }
    // A literal: one code point (a surrogate pair is one atom with the u flag).
    i += pattern.codePointAt(i)! > 0xffff ? 2 : 1;
    last = 'single';
  }
  return depth === 0;
}
