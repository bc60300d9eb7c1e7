/**
 * Runs host simulation seeds in this process and prints one JSON line per seed ({seed, ok, error,
 * stats, ms, rssMB}), so that host.sim.test.ts can run a long list of seeds in child processes of bounded
 * size, side by side (seed-shards.ts).
 *
 *   node dist/sim/host-seed-cli.js <seed>[,<seed>...]
 *
 * The run's options come from the environment, as in host.sim.test.ts: LOST_TAIL=0, SIM_RETENTION=0,
 * SIM_SUBSCRIPTIONS=0.
 */
import { runHostSimulation } from './host-cluster.js';
import { simRetentionFromEnv, simSubscriptionsFromEnv } from './seeds.js';
import { seedLinePrefix, type SeedLine } from './seed-shards.js';

const seeds = (process.argv[2] ?? '').split(',').filter((s) => s !== '').map(Number);
if (seeds.length === 0 || seeds.some((s) => !Number.isSafeInteger(s))) {
  console.error('usage: host-seed-cli.js <seed>[,<seed>...]');
  process.exit(2);
}
const lostTail = process.env['LOST_TAIL'] !== '0';
const retention = simRetentionFromEnv();
const subscriptions = simSubscriptionsFromEnv();
for (const seed of seeds) {
  const started = performance.now();
  let line: SeedLine;
  try {
    const r = await runHostSimulation({ seed, lostTail, retention, subscriptions });
    line = { seed, ok: r.ok, ...(r.error === undefined ? {} : { error: r.error }), stats: r.stats, ms: Math.round(performance.now() - started), rssMB: Math.round(process.memoryUsage.rss() / 2 ** 20) };
  } catch (err) {
    line = { seed, ok: false, error: `crash: ${err instanceof Error ? err.stack ?? err.message : String(err)}`, ms: Math.round(performance.now() - started) };
  }
  process.stdout.write(`${seedLinePrefix}${JSON.stringify(line)}\n`);
}
// Done: end now, whatever a run may have left scheduled (a child that stayed alive would keep its
// parent's test waiting for it for ever). Pipes are written synchronously on Linux; the callback
// makes sure of it elsewhere.
process.stdout.write('', () => process.exit(0));
