/**
 * The simulated state machine: a key-value map driven by committed entries, with a running hash of
 * everything applied so far so that two replicas can be compared at any index in O(1), and a
 * snapshot format that carries the hash along (so snapshots are checked too).
 */
import { assert } from '../core/assert.js';
const encoder = new TextEncoder();
const decoder = new TextDecoder();
export function encodeWrite(cmd) {
    return encoder.encode(JSON.stringify(['w', cmd.key, cmd.value]));
}
export function decodeWrite(data) {
    if (data.byteLength === 0)
        return undefined; // a leader's no-op
    const parsed = JSON.parse(decoder.decode(data));
    assert(Array.isArray(parsed) && parsed[0] === 'w', 'unknown simulated command');
    return { key: String(parsed[1]), value: String(parsed[2]) };
}
/** FNV-1a over 32 bits, folded over the previous hash: a cheap fingerprint of the applied sequence. */
export function chainHash(prev, e) {
    let h = (prev ^ 0x811c9dc5) >>> 0;
    const mix = (byte) => {
        h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    };
    for (const n of [e.index, e.term, e.type === 'normal' ? 1 : 2]) {
        for (let k = 0; k < 4; k++)
            mix((n / 2 ** (8 * k)) & 0xff);
    }
    for (const b of e.data)
        mix(b);
    return h;
}
export class KvStateMachine {
    data = new Map();
    applied = 0;
    hash = 0;
    apply(e) {
        assert(e.index === this.applied + 1, `applying ${e.index} after ${this.applied}: a gap or a repeat`);
        this.applied = e.index;
        this.hash = chainHash(this.hash, e);
        if (e.type !== 'normal')
            return undefined;
        const cmd = decodeWrite(e.data);
        if (cmd !== undefined)
            this.data.set(cmd.key, cmd.value);
        return cmd;
    }
    snapshotData() {
        return encoder.encode(JSON.stringify({ applied: this.applied, hash: this.hash, data: [...this.data.entries()] }));
    }
    restore(bytes, index) {
        this.data.clear();
        if (bytes.byteLength === 0) {
            assert(index === 0, `empty snapshot data at index ${index}`);
            this.applied = 0;
            this.hash = 0;
            return;
        }
        const s = JSON.parse(decoder.decode(bytes));
        assert(s.applied === index, `snapshot data at ${s.applied} labelled ${index}`);
        this.applied = s.applied;
        this.hash = s.hash;
        for (const [k, v] of s.data)
            this.data.set(k, v);
    }
}
//# sourceMappingURL=kv.js.map