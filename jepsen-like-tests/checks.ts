/**
 * Checkers over the recorded history and the healed cluster.
 */
import { checkLinearizable, type CheckResult, type KvOp } from '../src/sim/linearizability.js';

/**
 * Drops indeterminate writes whose value no read returned. Sound both ways: such a write can always
 * be linearized last (its response is +Infinity), and in any linearization no read sits between it
 * and the next write (a read there would return its unique value). Without this, every timed-out
 * write stays concurrent with the rest of the history and the search grows with 2^(their number).
 */
export function pruneUnseenIndeterminate(history: readonly KvOp[]): KvOp[] {
  const seen = new Set<string>();
  for (const op of history) if (op.kind === 'read' && op.value !== undefined) seen.add(`${op.key}\u0000${op.value}`);
  return history.filter((op) => op.kind === 'read' || Number.isFinite(op.complete) || seen.has(`${op.key}\u0000${op.value}`));
}

export function linearizable(history: readonly KvOp[]): CheckResult & { ms: number } {
  const t = performance.now();
  const r = checkLinearizable(pruneUnseenIndeterminate(history));
  return { ...r, ms: performance.now() - t };
}

/**
 * The stale-read corruption: pick, on one key, a completed write W1, a completed write W2 invoked
 * after W1 returned, and a read R invoked after W2 returned; replace R's value by W1's. Every
 * linearization orders W1 < W2 < R, so R cannot return W1's (unique) value: the checker must refuse.
 * Returns the corrupted history of that key only (the other keys do not change the verdict), or
 * undefined when the history has no such triple.
 */
export function corruptWithStaleRead(history: readonly KvOp[]): { ops: KvOp[]; description: string } | undefined {
  const done = history.filter((op) => Number.isFinite(op.complete));
  for (const w1 of done) {
    if (w1.kind !== 'write') continue;
    const w2 = done.find((op) => op.kind === 'write' && op.key === w1.key && op.invoke > w1.complete && op.value !== w1.value);
    if (w2 === undefined) continue;
    const r = done.find((op) => op.kind === 'read' && op.key === w1.key && op.invoke > w2.complete);
    if (r === undefined) continue;
    const ops = history.filter((op) => op.key === w1.key).map((op) => (op === r ? { ...op, value: w1.value } : op));
    return {
      ops,
      description: `key ${w1.key}: read by client ${r.client} at ${r.invoke.toFixed(1)} ms made to return ${w1.value} (written by client ${w1.client}, overwritten by ${w2.value} which completed at ${w2.complete.toFixed(1)} ms)`,
    };
  }
  return undefined;
}

/**
 * Where a key's history stops being linearizable: the shortest prefix (by invocation) that has no
 * linearization, found by bisection. A prefix keeps, besides its operations, the writes whose values
 * its reads returned (a read may see a write invoked after the read was), so a prefix fails only
 * because of what is in it. Returns the key's operations sorted by invocation and the index of the
 * operation that makes the prefix fail (usually the offending read).
 */
export function localize(history: readonly KvOp[], key: string): { ops: KvOp[]; at: number } | undefined {
  const ops = pruneUnseenIndeterminate(history.filter((op) => op.key === key)).sort((a, b) => a.invoke - b.invoke);
  const fails = (n: number): boolean => {
    const prefix = ops.slice(0, n);
    const read = new Set(prefix.filter((op) => op.kind === 'read').map((op) => op.value));
    const extra = ops.slice(n).filter((op) => op.kind === 'write' && read.has(op.value));
    return !checkLinearizable([...prefix, ...extra]).ok;
  };
  if (!fails(ops.length)) return undefined;
  let lo = 0; // prefix of length lo passes
  let hi = ops.length; // prefix of length hi fails
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fails(mid)) hi = mid;
    else lo = mid;
  }
  return { ops, at: hi - 1 };
}

/** The operations of `key` before and around where it stops being linearizable, as lines. */
export function excerpt(history: readonly KvOp[], key: string, nodeOf: (op: KvOp) => number | undefined = () => undefined, before = 25, after = 5): string {
  const found = localize(history, key);
  if (found === undefined) return '  (the key alone is linearizable)';
  const fmt = (op: KvOp, k: number): string =>
    `  ${k === found.at ? '>>' : '  '} c${op.client} n${nodeOf(op) ?? '?'} ${op.kind.padEnd(5)} ${String(op.value).padEnd(10)} [${op.invoke.toFixed(1)}, ${Number.isFinite(op.complete) ? op.complete.toFixed(1) : 'inf'}]`;
  const from = Math.max(0, found.at - before);
  return found.ops.slice(from, found.at + after + 1).map((op, k) => fmt(op, from + k)).join('\n');
}
