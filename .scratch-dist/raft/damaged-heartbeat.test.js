// Goal: a damaged member takes no commit index from a heartbeat, only from appends that show its log
// matches the leader's. A leader's heartbeat names min(match, commit) for the member, and its match
// may be from before the member lost entries: the entry the member holds at that index now may be an
// older one that the leader's replaced (RocksDB's point-in-time recovery brings back the version
// before the lost writes). Found by the host simulation (src/sim/host-cluster.ts, lost fsynced data:
// "CommittedPrefix: node 3 has term 5 at its commit 62, committed term 7").
// Method: a lone RawNode holding 4@2 and 5@2, damaged, hears from a leader of term 3 that commit is 5
// (whose entries 4 and 5 are of term 3).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import { damagedReject, makeMessage } from './types.js';
const entry = (index, term) => ({ index, term, type: 'normal', data: new Uint8Array([index, term]) });
function node(damaged) {
    const storage = new MemoryStorage();
    const { entries } = bootstrapState([1, 2, 3]);
    storage.append([...entries, entry(4, 2), entry(5, 2)]);
    storage.setHardState({ term: 2, vote: 0, commit: 3 });
    const raw = new RawNode({ id: 1, storage, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: new Prng(5), preVote: true, checkQuorum: true, damaged });
    const applied = [];
    const run = () => {
        const out = [];
        while (raw.hasReady()) {
            const rd = raw.ready();
            storage.append(rd.entries);
            if (rd.hardState)
                storage.setHardState(rd.hardState);
            for (const e of rd.committedEntries) {
                if (e.type === 'confChange')
                    raw.applyConfChange(e);
                else
                    applied.push(e);
            }
            out.push(...rd.messages);
            raw.advance(rd);
        }
        return out;
    };
    run();
    return { raw, storage, applied, run };
}
test('a damaged member does not commit from a heartbeat what its log may hold in an older version', () => {
    const { raw, applied, run } = node({ term: 2, index: 5 });
    raw.step(makeMessage({ type: 'heartbeat', from: 2, to: 1, term: 3, commit: 5 }));
    const out = run();
    assert.ok(raw.status().commit <= 3, `commit ${raw.status().commit}: entries 4 and 5 here may not be the leader's`);
    assert.deepEqual(applied.map((e) => `${e.index}@${e.term}`), []);
    const reject = out.find((m) => m.type === 'appResp');
    assert.ok(reject !== undefined && reject.reject && reject.context === damagedReject, 'the leader is told to forget its match and probe');
    assert.ok(reject.rejectHint <= 3);
    // The leader's append shows what matches: the member takes the leader's entries and commits them.
    raw.step(makeMessage({ type: 'app', from: 2, to: 1, term: 3, index: 3, logTerm: 1, entries: [entry(4, 3), entry(5, 3)], commit: 5 }));
    run();
    assert.equal(raw.status().commit, 5);
    assert.deepEqual(applied.map((e) => `${e.index}@${e.term}`), ['4@3', '5@3']);
    assert.equal(raw.status().damaged, null, 'repaired');
});
test('a healthy member takes the commit index of a heartbeat (the leader counts only what it acknowledged)', () => {
    const { raw, applied, run } = node(null);
    raw.step(makeMessage({ type: 'heartbeat', from: 2, to: 1, term: 3, commit: 5 }));
    run();
    assert.equal(raw.status().commit, 5);
    assert.deepEqual(applied.map((e) => `${e.index}@${e.term}`), ['4@2', '5@2']);
});
//# sourceMappingURL=damaged-heartbeat.test.js.map