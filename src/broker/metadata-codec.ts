/**
 * The bytes of the metadata group: commands in log entries and state machine images in snapshots.
 * Both are JSON (the command op names are the versioned, append-only part, see metadata/commands.ts).
 *
 * Commands that arrive from another node (a forwarded proposal) are checked for their shape before
 * they are proposed: once committed, every node applies them, and a command the state machine cannot
 * apply would stop every node at once.
 */
import type { MetadataCommand } from '../metadata/commands.js';
import { isMetadataLimits } from '../metadata/limits.js';
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

/** Decodes a command from a committed entry (written by a leader that checked it). */
export function decodeCommand(data: Uint8Array): MetadataCommand {
  return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as MetadataCommand;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';

function isSubscription(s: unknown): boolean {
  if (!isObject(s)) return false;
  const ets = s['event_types'];
  const cursors = s['initial_cursors'];
  return (
    nonEmptyString(s['id']) &&
    nonEmptyString(s['owning_application']) &&
    nonEmptyString(s['consumer_group']) &&
    typeof s['created_at'] === 'string' &&
    (s['read_from'] === 'begin' || s['read_from'] === 'end' || s['read_from'] === 'cursors') &&
    Array.isArray(ets) && ets.length > 0 && ets.every(nonEmptyString) &&
    (cursors === undefined ||
      (Array.isArray(cursors) && cursors.every((c) => isObject(c) && nonEmptyString(c['event_type']) && typeof c['partition'] === 'string' && typeof c['offset'] === 'string')))
  );
}

const isMs = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPartitionKey = (p: unknown): boolean => isObject(p) && nonEmptyString(p['event_type']) && typeof p['partition'] === 'string';
const isCursorList = (v: unknown): boolean =>
  Array.isArray(v) && v.every((c) => isPartitionKey(c) && typeof (c as Record<string, unknown>)['offset'] === 'number' && Number.isSafeInteger((c as Record<string, unknown>)['offset']) && ((c as Record<string, unknown>)['offset'] as number) >= -1);

const isNodeList = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((n) => Number.isSafeInteger(n) && (n as number) >= 1);
/** An optional placement proposal: absent, or replicas per partition and the members placed over. */
const isPlacementField = (v: unknown): boolean => v === undefined || (isObject(v) && isNodeList(v['members']) && Array.isArray(v['replicas']) && v['replicas'].every(isNodeList));

function isSession(s: unknown): boolean {
  return isObject(s) && nonEmptyString(s['id']) && Number.isSafeInteger(s['node']) && typeof s['incarnation'] === 'string' && isMs(s['openedAtMs']) && isMs(s['commitTimeoutMs']);
}

/** Checks an untrusted (forwarded) command's shape; returns why it is refused, or undefined. */
export function checkForwardedCommand(data: Uint8Array): string | undefined {
  let cmd: unknown;
  try {
    cmd = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return 'command is not JSON';
  }
  if (!isObject(cmd)) return 'command is not an object';
  const et = cmd['eventType'];
  const named = isObject(et) && typeof et['name'] === 'string' && et['name'] !== '' && isObject(et['schema']) && typeof et['updated_at'] === 'string';
  switch (cmd['op']) {
    case 'event_type.create': {
      const n = cmd['partitionCount'];
      return named && typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && isPlacementField(cmd['placement']) ? undefined : 'malformed event_type.create';
    }
    case 'event_type.update':
      return named && typeof cmd['basedOnUpdatedAt'] === 'string' && typeof cmd['schemaChanged'] === 'boolean' ? undefined : 'malformed event_type.update';
    case 'event_type.delete':
      return typeof cmd['name'] === 'string' ? undefined : 'malformed event_type.delete';
    case 'feature.set':
      return typeof cmd['feature'] === 'string' && typeof cmd['enabled'] === 'boolean' ? undefined : 'malformed feature.set';
    case 'subscription.create':
      return isSubscription(cmd['subscription']) ? undefined : 'malformed subscription.create';
    case 'subscription.delete':
      return typeof cmd['id'] === 'string' ? undefined : 'malformed subscription.delete';
    case 'stream.open':
      return nonEmptyString(cmd['subscription']) && isSession(cmd['session']) && isCursorList(cmd['starts']) ? undefined : 'malformed stream.open';
    case 'stream.close':
      return nonEmptyString(cmd['subscription']) && nonEmptyString(cmd['session']) && isMs(cmd['atMs']) ? undefined : 'malformed stream.close';
    case 'stream.close_stale':
      return Number.isSafeInteger(cmd['node']) && typeof cmd['incarnation'] === 'string' && isMs(cmd['atMs']) ? undefined : 'malformed stream.close_stale';
    case 'stream.release':
      return nonEmptyString(cmd['subscription']) && nonEmptyString(cmd['session']) && Array.isArray(cmd['partitions']) && cmd['partitions'].every(isPartitionKey)
        ? undefined
        : 'malformed stream.release';
    case 'cursor.commit':
      return nonEmptyString(cmd['subscription']) && nonEmptyString(cmd['session']) && isMs(cmd['atMs']) && isCursorList(cmd['cursors']) ? undefined : 'malformed cursor.commit';
    case 'storage.create': {
      const st = cmd['storage'];
      return isObject(st) && nonEmptyString(st['id']) && st['storage_type'] === 'broker' && isObject(st['broker_configuration']) ? undefined : 'malformed storage.create';
    }
    case 'storage.delete':
      return nonEmptyString(cmd['id']) ? undefined : 'malformed storage.delete';
    case 'timeline.create': {
      const starts = cmd['starts'];
      return nonEmptyString(cmd['eventType']) && nonEmptyString(cmd['id']) && nonEmptyString(cmd['storage_id']) && typeof cmd['at'] === 'string' &&
        Array.isArray(starts) && starts.every((n) => Number.isSafeInteger(n) && (n as number) >= 0) && isPlacementField(cmd['placement'])
        ? undefined
        : 'malformed timeline.create';
    }
    case 'timeline.prepare':
      return nonEmptyString(cmd['eventType']) && nonEmptyString(cmd['id']) && nonEmptyString(cmd['storage_id']) && typeof cmd['at'] === 'string' && isPlacementField(cmd['placement'])
        ? undefined
        : 'malformed timeline.prepare';
    case 'timeline.commit': {
      const starts = cmd['starts'];
      return nonEmptyString(cmd['eventType']) && nonEmptyString(cmd['id']) && typeof cmd['at'] === 'string' && Array.isArray(starts) && starts.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
        ? undefined
        : 'malformed timeline.commit';
    }
    case 'blacklist.set':
      return ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'].includes(cmd['type'] as string) && nonEmptyString(cmd['name']) && typeof cmd['blocked'] === 'boolean'
        ? undefined
        : 'malformed blacklist.set';
    case 'cursor.reset':
      return nonEmptyString(cmd['subscription']) && isCursorList(cmd['cursors']) ? undefined : 'malformed cursor.reset';
    case 'limits.set':
      return isMetadataLimits(cmd['limits']) ? undefined : 'malformed limits.set';
    case 'partition.move':
      return Number.isSafeInteger(cmd['group']) && ['add_learner', 'promote', 'remove', 'cancel'].includes(cmd['step'] as string) && isNodeList([cmd['from'], cmd['to']])
        ? undefined
        : 'malformed partition.move';
    case 'partition.leader':
      return Number.isSafeInteger(cmd['group']) && isNodeList([cmd['leader']]) ? undefined : 'malformed partition.leader';
    default:
      return `unknown op ${JSON.stringify(cmd['op'])}`;
  }
}

export function encodeImage(sm: MetadataStateMachine): Buffer {
  const image: StoredImage = { v: 1, commands: sm.appliedIndex, state: sm.snapshot() };
  return Buffer.from(JSON.stringify(image));
}

export function decodeImage(data: Uint8Array): MetadataStateMachine {
  const image = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as StoredImage;
  if (image.v !== 1) throw new Error(`metadata snapshot format ${String(image.v)} is not known`);
  return MetadataStateMachine.restore(image.state, image.commands);
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
