/**
 * A linearizability checker for a key-value store whose keys are independent registers (Wing & Gong's
 * search with Lowe's memoisation, the approach of Porcupine and Knossos).
 *
 * A history is a list of completed or indeterminate operations with their invocation and response
 * positions in one global order (the simulator's event sequence numbers, so there are no ties). For
 * each key separately (registers compose: P-compositionality), the checker searches for a total
 * order that respects real time — an operation may be placed next only if it was invoked before
 * every unplaced operation had returned — and the register's semantics: a read returns the value of
 * the latest write placed before it (or undefined when there is none). A write whose outcome the
 * client never learned has response position +Infinity: it may take effect at any point after its
 * invocation, or never (it can always be placed last). Reads that never returned have no effect and
 * are left out of the history by the recorder.
 */
import { assert } from '../core/assert.js';
/** Gives up (reporting failure) past this many search states; the simulator keeps histories far smaller. */
const exploredMax = 5_000_000;
export function checkLinearizable(history) {
    const byKey = new Map();
    for (const op of history) {
        assert(op.complete > op.invoke, `operation completes (${op.complete}) before it is invoked (${op.invoke})`);
        assert(op.kind === 'write' || Number.isFinite(op.complete), 'an unfinished read must be left out of the history');
        let ops = byKey.get(op.key);
        if (ops === undefined)
            byKey.set(op.key, (ops = []));
        ops.push(op);
    }
    let explored = 0;
    for (const [key, ops] of [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const r = checkRegister(ops);
        explored += r.explored;
        if (!r.ok)
            return { ok: false, badKey: key, explored };
    }
    return { ok: true, explored };
}
function checkRegister(opsIn) {
    const ops = [...opsIn].sort((a, b) => a.invoke - b.invoke);
    const n = ops.length;
    const placed = new Uint8Array(n);
    const seen = new Set();
    let explored = 0;
    const candidatesFor = (value) => {
        let minComplete = Infinity;
        for (let i = 0; i < n; i++)
            if (placed[i] === 0 && ops[i].complete < minComplete)
                minComplete = ops[i].complete;
        const out = [];
        for (let i = 0; i < n; i++) {
            if (placed[i] !== 0)
                continue;
            const op = ops[i];
            if (op.invoke > minComplete)
                break; // sorted by invoke: no later op can go next either
            if (op.kind === 'read' && op.value !== value)
                continue;
            out.push(i);
        }
        return out;
    };
    const keyOf = (value) => `${placed.join('')}|${value === undefined ? '\u0000' : value}`;
    let remaining = n;
    const stack = [{ value: undefined, candidates: candidatesFor(undefined), next: 0, chosen: -1 }];
    while (stack.length > 0) {
        if (remaining === 0)
            return { ok: true, explored };
        const top = stack[stack.length - 1];
        if (top.chosen >= 0) {
            // Undo the previous choice made from this frame before trying the next one.
            placed[top.chosen] = 0;
            remaining++;
            top.chosen = -1;
        }
        if (top.next >= top.candidates.length) {
            stack.pop();
            continue;
        }
        const i = top.candidates[top.next++];
        const op = ops[i];
        const value = op.kind === 'write' ? op.value : top.value;
        placed[i] = 1;
        remaining--;
        top.chosen = i;
        if (remaining === 0)
            return { ok: true, explored };
        const k = keyOf(value);
        if (seen.has(k))
            continue;
        seen.add(k);
        if (++explored > exploredMax)
            return { ok: false, explored };
        stack.push({ value, candidates: candidatesFor(value), next: 0, chosen: -1 });
    }
    return { ok: n === 0, explored };
}
//# sourceMappingURL=linearizability.js.map