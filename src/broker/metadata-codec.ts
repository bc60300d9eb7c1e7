/**
 * The bytes of the metadata group: commands in log entries and state machine images in snapshots.
 * Both are JSON (the command op names are the versioned, append-only part, see metadata/commands.ts).
 *
 * Commands that arrive from another node (a forwarded proposal) are checked for their shape before
 * they are proposed, and again by the state machine where every node applies them (metadata/shapes.ts):
 * a malformed command is refused, never applied and never fatal. A snapshot image is checked whole
 * before anything of it is stored (imageProblem).
 */
import type { MetadataCommand } from '../metadata/commands.js';
import { commandProblem, isObject, metadataOps } from '../metadata/shapes.js';
import { MetadataStateMachine, type ApplyResult, type MetadataSnapshot } from '../metadata/state-machine.js';

interface StoredImage {
  v: 1;
  /** Commands applied (the state machine counts commands, not Raft indexes: no-ops and conf changes are not commands). */
  commands: number;
  state: MetadataSnapshot;
}

export function encodeCommand(cmd: MetadataCommand): Buffer {
  return Buffer.from(JSON.stringify(cmd));
}

/**
 * Decodes a command from a committed entry. Never throws: bytes that are not JSON become a value the
 * state machine refuses as malformed (shapes.ts), alike on every node, so a bad entry is not fatal.
 */
export function decodeCommand(data: Uint8Array): MetadataCommand {
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as MetadataCommand;
  } catch {
    return { op: '(not JSON)' } as unknown as MetadataCommand;
  }
}

/** Checks an untrusted (forwarded) command's shape before it is proposed; returns why it is refused, or undefined. */
export function checkForwardedCommand(data: Uint8Array): string | undefined {
  let cmd: unknown;
  try {
    cmd = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return 'command is not JSON';
  }
  if (!isObject(cmd)) return 'command is not an object';
  if (!metadataOps.has(cmd['op'] as string)) return `unknown op ${JSON.stringify(cmd['op'])}`;
  return commandProblem(cmd);
}

export function encodeImage(sm: MetadataStateMachine): Buffer {
  const image: StoredImage = { v: 1, commands: sm.appliedIndex, state: sm.snapshot() };
  return Buffer.from(JSON.stringify(image));
}

function parseImage(data: Uint8Array): { image: StoredImage } | { problem: string } {
  let image: unknown;
  try {
    image = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch (err) {
    return { problem: `not JSON (${(err as Error).message})` };
  }
  if (!isObject(image)) return { problem: 'not an object' };
  if (image['v'] !== 1) return { problem: `metadata snapshot format ${JSON.stringify(image['v'])} is not known` };
  if (!Number.isSafeInteger(image['commands']) || (image['commands'] as number) < 0) return { problem: 'commands is not a count' };
  return { image: image as unknown as StoredImage };
}

/** Why snapshot data is not a metadata image this version can restore, or undefined when it is one. */
export function imageProblem(data: Uint8Array): string | undefined {
  const r = parseImage(data);
  return 'problem' in r ? r.problem : MetadataStateMachine.snapshotProblem(r.image.state);
}

/** The state machine of a snapshot image; throws when the image is malformed (restore checks its state). */
export function decodeImage(data: Uint8Array): MetadataStateMachine {
  const r = parseImage(data);
  if ('problem' in r) throw new Error(`malformed metadata snapshot: ${r.problem}`);
  return MetadataStateMachine.restore(r.image.state, r.image.commands);
}

export function encodeResult(r: ApplyResult): Buffer {
  return Buffer.from(JSON.stringify(r));
}

/** Decodes an apply result from the leader; undefined if it is not one. */
export function decodeResult(data: Uint8Array): ApplyResult | undefined {
  try {
    const r = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as unknown;
    if (!isObject(r) || typeof r['ok'] !== 'boolean') return undefined;
    if (r['ok'] === false && (typeof r['reason'] !== 'string' || typeof r['detail'] !== 'string')) return undefined;
    return r as ApplyResult;
  } catch {
    return undefined;
  }
}
