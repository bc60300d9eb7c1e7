// Goal: the columnar in-memory offset index holds exactly the rows an array of row objects would,
// through pushes, drops from the front (memory compaction), clears (snapshots) and the regrowth and
// compaction of its columns; its lower bound is the first row whose last offset reaches an offset.
// Method: fast-check operation sequences against an array model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RecentRows } from './recent-rows.js';

interface Row {
  raftIndex: number;
  first: number;
  last: number;
  appendTimeMs: number;
  position: number;
}

test('property: the columns hold what an array of rows would', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof({ arbitrary: fc.record({ op: fc.constant('push' as const), n: fc.integer({ min: 1, max: 5 }), entries: fc.integer({ min: 1, max: 3 }) }), weight: 4 }, { arbitrary: fc.record({ op: fc.constant('drop' as const), by: fc.nat(3) }), weight: 3 }, { arbitrary: fc.constant({ op: 'clear' as const }), weight: 1 }), { maxLength: 300 }),
      (ops) => {
        const cols = new RecentRows();
        let model: Row[] = [];
        let raftIndex = 1;
        let offset = 0;
        for (const o of ops) {
          if (o.op === 'push') {
            // `entries` entries holding `n` batches each of 1-3 events
            for (let e = 0; e < o.entries; e++, raftIndex++) {
              let position = 0;
              for (let b = 0; b < o.n; b++) {
                const count = 1 + ((raftIndex + b) % 3);
                const row = { raftIndex, first: offset, last: offset + count - 1, appendTimeMs: 1e12 + raftIndex, position };
                offset += count;
                position += count;
                model.push(row);
                cols.push(row.raftIndex, row.first, row.last, row.appendTimeMs, row.position);
              }
            }
          } else if (o.op === 'drop') {
            const before = (model[0]?.raftIndex ?? raftIndex) + o.by;
            model = model.filter((r) => r.raftIndex >= before);
            cols.dropBefore(before);
          } else {
            model = [];
            cols.clear();
          }
          assert.equal(cols.length, model.length);
        }
        for (let i = 0; i < model.length; i++) {
          assert.deepEqual(cols.row(i), { ...model[i]!, requestId: '' });
          assert.equal(cols.firstAt(i), model[i]!.first);
          assert.equal(cols.lastAt(i), model[i]!.last);
          assert.equal(cols.raftIndexAt(i), model[i]!.raftIndex);
        }
        for (let off = (model[0]?.first ?? 0) - 2; off <= offset + 1; off++) {
          const want = model.findIndex((r) => r.last >= off);
          assert.equal(cols.lowerBoundLast(off), want < 0 ? model.length : want, `lower bound of ${off}`);
        }
      },
    ),
    { numRuns: 300, seed: 11 },
  );
});
