/**
 * Helpers shared by the storage tests (imported only by *.test.ts and the bench script).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Clock } from '../core/ports.js';

export async function tempDir(name: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `brook-${name}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export class ManualClock implements Clock {
  constructor(public now = 1_000_000) {}
  nowMs(): number {
    return this.now;
  }
  monotonicMs(): number {
    return this.now;
  }
}

export function ev(text: string): Buffer {
  return Buffer.from(text);
}

/** A promise with its resolver exposed, for holding writes open in tests. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
