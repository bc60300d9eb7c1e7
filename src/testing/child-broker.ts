/**
 * TEST-ONLY: runs the broker as a separate process (node dist/main.js), so tests can kill -9 it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeListenPort } from './free-ports.js';

const mainJs = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.js');

/** A free port for a broker that a test restarts on the same port (free-ports.ts, freeListenPort). */
export const freePort = freeListenPort;

export interface ChildBroker {
  url: string;
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | string>;
}

export async function spawnBroker(dataDir: string, port: number, env: Record<string, string> = {}): Promise<ChildBroker> {
  const proc = spawn(process.execPath, [mainJs], {
    env: { ...process.env, BROOK_DATA_DIR: dataDir, BROOK_PORT: String(port), BROOK_HOST: '127.0.0.1', BROOK_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`broker exited during start:\n${out}`);
    try {
      const res = await fetch(url + '/event-types', { signal: AbortSignal.timeout(2000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`broker did not start within 20 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, proc, output: () => out, exited };
}
