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

/** The operations of `key` around a time, as lines, for a violation report. */
export function excerpt(history: readonly KvOp[], key: string, limit = 40): string {
  const ops = history.filter((op) => op.key === key).sort((a, b) => a.invoke - b.invoke);
  const fmt = (op: KvOp): string =>
    `  c${op.client} ${op.kind.padEnd(5)} ${String(op.value).padEnd(10)} [${op.invoke.toFixed(1)}, ${Number.isFinite(op.complete) ? op.complete.toFixed(1) : 'inf'}]`;
  const lines = ops.map(fmt);
  return lines.length <= limit ? lines.join('\n') : `${lines.slice(0, limit / 2).join('\n')}\n  ...\n${lines.slice(-limit / 2).join('\n')}`;
}
