/**
 * Runs seeds of one simulation in this tree and prints one JSON line per seed ({seed, ok, error}),
 * so that the mutant runner (run.ts) can run it in a patched copy and read partial results even if
 * a mutant makes a run hang.
 *
 *   node dist/sim/mutants/seeds-cli.js <raft|host> <first seed> <count> [consequences] [step=<n>]
 *
 * With `consequences`, the simulations check only the consequences of broken rules (lost, diverging
 * or duplicated data, two leaders in a term), not the rules themselves. With `step=2`, every other
 * seed from the first (count seeds in all).
 */
import { runSimulation } from '../cluster.js';
import { runHostSimulation } from '../host-cluster.js';
import { simRetentionFromEnv, simSubscriptionsFromEnv } from '../seeds.js';

const [sim, fromArg, countArg, ...rest] = process.argv.slice(2);
const ruleChecks = !rest.includes('consequences');
const from = Number(fromArg);
const count = Number(countArg);
const step = Number(rest.find((a) => a.startsWith('step='))?.slice('step='.length) ?? '1');
if ((sim !== 'raft' && sim !== 'host') || !Number.isSafeInteger(from) || !Number.isSafeInteger(count) || !Number.isSafeInteger(step) || step < 1) {
  console.error('usage: seeds-cli.js <raft|host> <first seed> <count> [consequences] [step=<n>]');
  process.exit(2);
}
for (let seed = from; seed < from + count * step; seed += step) {
  let line: { seed: number; ok: boolean; error?: string };
  try {
    const r = sim === 'raft' ? runSimulation({ seed, ruleChecks }) : await runHostSimulation({ seed, ruleChecks, retention: simRetentionFromEnv(), subscriptions: simSubscriptionsFromEnv() });
    line = r.ok ? { seed, ok: true } : { seed, ok: false, error: r.error ?? 'failed' };
  } catch (err) {
    // A mutant may also break the code in ways no check names (an exception out of the run).
    line = { seed, ok: false, error: `crash: ${err instanceof Error ? err.message : String(err)}` };
  }
  process.stdout.write(JSON.stringify(line) + '\n');
}
