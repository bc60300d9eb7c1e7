/**
 * Schema `pattern` and `patternProperties` run on an RE2-family engine (re2js, pure JavaScript), whose
 * matching time is linear in the input: a backtracking engine (V8's) took 23 s for `^(a+)+$` on a
 * 30-character value, and every producer of an event type can send such values. ajv takes the engine
 * through its `code.regExp` option (schema-compiler.ts).
 *
 * JSON Schema patterns are ECMAScript regular expressions (with the `u` flag, as ajv compiles them), so
 * a pattern must first be a valid one; it is then translated to RE2 syntax keeping its ECMAScript
 * meaning, and what RE2 cannot run in linear time is refused with a reason (422 at schema creation):
 * - backreferences (`\1`, `\k<name>`) and lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`);
 * - counted repetition above 1000 (`a{1001}`), and Unicode property names RE2 does not know
 *   (`\p{Script=Greek}`; `\p{Greek}` and `\p{L}` work).
 * Translated so that the meaning stays ECMAScript's: `\uXXXX`, `\u{X}` and surrogate pairs, `\cX`,
 * `[\b]`, `[^]` and `[]`; `\s`/`\S` (ECMAScript's Unicode white space, RE2's is ASCII only) and `.`
 * (ECMAScript's excludes \r, U+2028 and U+2029 as well as \n). `\d`, `\w`, `\b`, `^` and `$` mean
 * the same in both.
 *
 * A pattern that V8's engine provably runs in linear time too (backtrack-free.ts: no alternation, exact
 * repetitions, at most one other repetition of a single character in a pattern anchored with `^`;
 * `^ORD-[0-9]{10}$`, `^[A-Z]{2}$`, `^[a-z0-9-]+$`) is run by V8 after the same checks: about ten times
 * faster than re2js, with no allocation per test.
 */
import { RE2JS } from 're2js';
import { backtrackFree } from './backtrack-free.js';

export class UnsupportedPatternError extends Error {
  override name = 'UnsupportedPatternError';
}

/** ECMAScript WhiteSpace and LineTerminator code points: what `\s` matches. */
const whiteSpace: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const codePointMax = 0x10ffff;

const hex = (n: number) => `\\x{${n.toString(16)}}`;
const ranges = (rs: readonly (readonly [number, number])[]) => rs.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');

function complement(rs: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [a, b] of rs) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= codePointMax) out.push([next, codePointMax]);
  return out;
}

const spaceRanges = ranges(whiteSpace);
const nonSpaceRanges = ranges(complement(whiteSpace));
const anyRange = `${hex(0)}-${hex(codePointMax)}`;
/** ECMAScript `.` without the s flag: anything but a line terminator. */
const dot = `[^\\n\\r${hex(0x2028)}${hex(0x2029)}]`;

const syntaxCharacters = new Set('^$\\.*+?()[]{}|/-'.split(''));

/**
 * Translates a valid ECMAScript pattern (u flag) to RE2 syntax with the same meaning; throws
 * UnsupportedPatternError for what RE2 has no linear-time equivalent of.
 */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const [text, used] = translateEscape(pattern, i, inClass);
      out += text;
      i += used;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      // A literal [ in a class: escaped, so RE2 cannot read a POSIX class ([:alpha:]) into it.
      out += c === '[' ? '\\[' : c;
      i++;
      continue;
    }
    if (c === '[') {
      // ECMAScript's empty classes: [] matches nothing, [^] anything; RE2 has no such syntax.
      if (pattern.startsWith('[]', i)) {
        out += `[^${anyRange}]`;
        i += 2;
        continue;
      }
      if (pattern.startsWith('[^]', i)) {
        out += `[${anyRange}]`;
        i += 3;
        continue;
      }
      inClass = true;
      out += c;
      i++;
      if (pattern[i] === '^') {
        out += '^';
        i++;
      }
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') {
        throw new UnsupportedPatternError('lookahead and lookbehind assertions cannot run in linear time');
      }
    }
    if (c === '.') {
      out += dot;
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** One escape sequence at `at` (a backslash): its RE2 text and how many characters it used. */
function translateEscape(p: string, at: number, inClass: boolean): [string, number] {
  const c = p[at + 1] ?? '';
  switch (c) {
    case 'u': {
      const [cp, used] = unicodeEscape(p, at);
      return [hex(cp), used];
    }
    case 's':
      return [inClass ? spaceRanges : `[${spaceRanges}]`, 2];
    case 'S':
      return [inClass ? nonSpaceRanges : `[${nonSpaceRanges}]`, 2];
    case 'c':
      return [hex(p.charCodeAt(at + 2) % 32), 3];
    case '0':
      return [hex(0), 2];
    case 'b':
      // In a class, \b is the backspace character; outside, a word boundary as in RE2.
      return [inClass ? hex(8) : '\\b', 2];
    case 'k':
      throw new UnsupportedPatternError('backreferences (\\k<name>) cannot run in linear time');
    case 'x':
      return [hex(parseInt(p.slice(at + 2, at + 4), 16)), 4];
    case 'p':
    case 'P': {
      const close = p.indexOf('}', at);
      return [p.slice(at, close + 1), close + 1 - at];
    }
    default:
      if (c >= '1' && c <= '9') throw new UnsupportedPatternError(`backreferences (\\${c}) cannot run in linear time`);
      // \d \D \w \W \B \f \n \r \t \v and escaped syntax characters mean the same in RE2.
      if ('dDwWBfnrtv'.includes(c) || syntaxCharacters.has(c)) return ['\\' + c, 2];
      // A valid u-mode pattern has no other escapes (identity escapes are of syntax characters only).
      throw new UnsupportedPatternError(`the escape \\${c} is not known`);
  }
}

/** \uXXXX, \u{X...}, or a surrogate pair written as two \uXXXX (one code point in u mode). */
function unicodeEscape(p: string, at: number): [number, number] {
  if (p[at + 2] === '{') {
    const close = p.indexOf('}', at);
    return [parseInt(p.slice(at + 3, close), 16), close + 1 - at];
  }
  const unit = parseInt(p.slice(at + 2, at + 6), 16);
  if (unit >= 0xd800 && unit <= 0xdbff && p.startsWith('\\u', at + 6)) {
    const low = parseInt(p.slice(at + 8, at + 12), 16);
    if (low >= 0xdc00 && low <= 0xdfff) return [0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00), 12];
  }
  return [unit, 6];
}

export interface LinearRegExp {
  test(input: string): boolean;
}

/**
 * Compiles an ECMAScript pattern to a linear-time matcher; throws UnsupportedPatternError with the reason.
 * Backtrack-free patterns run on V8's engine, the others on RE2.
 */
export function linearRegExp(pattern: string): LinearRegExp {
  const re2 = re2RegExp(pattern);
  // Refused or accepted exactly as by RE2 (it compiled the pattern); only the engine that runs it changes.
  return backtrackFree(pattern) ? new RegExp(pattern, 'u') : re2;
}

/** The pattern compiled for RE2 whatever its shape (the translation's own tests use it directly). */
export function re2RegExp(pattern: string): LinearRegExp {
  try {
    // Checks the ECMAScript syntax only (V8 parses; nothing runs), as ajv does without this engine.
    new RegExp(pattern, 'u');
  } catch (err) {
    throw new UnsupportedPatternError(`pattern ${JSON.stringify(pattern)} is not a valid ECMAScript regular expression: ${(err as Error).message}`);
  }
  let translated: string;
  try {
    translated = toRe2Syntax(pattern);
  } catch (err) {
    throw new UnsupportedPatternError(`pattern ${JSON.stringify(pattern)} is not supported: ${(err as Error).message}`);
  }
  try {
    return RE2JS.compile(translated);
  } catch (err) {
    throw new UnsupportedPatternError(`pattern ${JSON.stringify(pattern)} is not supported by the linear-time engine (RE2): ${(err as Error).message}`);
  }
}
