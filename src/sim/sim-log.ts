/**
 * Debugging aid: production log lines of chosen nodes, which say what the trace does not (fetches, log
 * shipping, stream assignments). `SIM_LOG=1,3` prints those of nodes 1 and 3 as JSON lines, stamped
 * with the simulated time (`t`), to the file `SIM_LOG_FILE` (or stderr, which `node --test` swallows).
 * Off by default: nodes log nothing.
 */
import pino, { type Logger } from 'pino';

const silent = pino({ level: 'silent' });
const nodes = new Set((process.env['SIM_LOG'] ?? '').split(',').filter((s) => s !== '').map(Number));

/** The logger for node `id`'s production components: silent unless SIM_LOG names it. */
export function simLogger(id: number, nowMs: () => number): Logger {
  if (!nodes.has(id)) return silent;
  return pino({ level: 'debug', base: { n: id }, timestamp: () => `,"t":${nowMs().toFixed(2)}` }, pino.destination({ dest: process.env['SIM_LOG_FILE'] ?? 2, sync: true }));
}
