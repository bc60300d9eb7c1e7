/**
 * The shape of what the metadata state machine takes from the log and from snapshots. PURE.
 *
 * A command or a snapshot comes from the Raft log or from a leader, that is from another member, which
 * may be buggy (or, without node-to-node authentication, anyone). Every node applies what is committed,
 * so one value the state machine cannot handle would stop every node at once and again at every restart.
 * So the state machine checks each command before it applies it (a malformed one is refused on every
 * node alike, never applied, never fatal) and each snapshot before anything of it is stored.
 *
 * The checks are on types and on what the state machine itself relies on (names, numbers it counts
 * with, lists it walks, references it asserts). They are lenient about fields that older versions did
 * not write (an absent optional field is fine; a present one must have its type), because the log and
 * snapshots written by older versions are checked by the same rules when a node replays them.
 */
import type { MetadataOp } from './commands.js';
import { isMetadataLimits } from './limits.js';
import { isMemberId as isPlacedMember, isNodeId } from './placement-types.js';
import { nodeOfMember } from '../core/member-id.js';

const isMemberId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
import { acceptedLossesProblem, lossRecordProblem } from './accepted-losses.js';
import { diskTokenBytesMax, formerMembersMax, registeredDisksMax } from './disk-registry.js';
import { blacklistTypes, categories, compatibilityModes, enrichmentStrategies, partitionStrategies, readFromValues } from './types.js';

type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const listOf = (v: unknown, each: (x: unknown) => boolean): v is unknown[] => Array.isArray(v) && v.every(each);
const oneOf = (values: readonly string[]) => (v: unknown): boolean => typeof v === 'string' && values.includes(v);
/** An optional field: absent (undefined) or of the type. */
const opt = (v: unknown, ok: (x: unknown) => boolean): boolean => v === undefined || ok(v);

/** Thrown by the checks below; the message says which value and why. */
class ShapeError extends Error {}

function need(ok: boolean, what: string): void {
  if (!ok) throw new ShapeError(what);
}

const isAttribute = (a: unknown): boolean => isObject(a) && isString(a['data_type']) && isString(a['value']);
const isAttributeList = (v: unknown): boolean => listOf(v, isAttribute);

function checkSchema(s: unknown, what: string): void {
  need(isObject(s), `${what} is not an object`);
  const o = s as Obj;
  need(isString(o['schema']), `${what}.schema is not a string`);
  need(opt(o['type'], isString) && opt(o['version'], isString) && opt(o['created_at'], isString), `${what}: type, version and created_at must be strings`);
}

function checkEventType(et: unknown, what: string): void {
  need(isObject(et), `${what} is not an object`);
  const o = et as Obj;
  need(nonEmptyString(o['name']), `${what}.name is not a non-empty string`);
  checkSchema(o['schema'], `${what}.schema`);
  need(isString(o['updated_at']), `${what}.updated_at is not a string`);
  need(opt(o['created_at'], isString) && opt(o['owning_application'], isString), `${what}: created_at and owning_application must be strings`);
  need(opt(o['category'], oneOf(categories)), `${what}.category is not a category`);
  need(opt(o['partition_strategy'], oneOf(partitionStrategies)), `${what}.partition_strategy is not a strategy`);
  need(opt(o['compatibility_mode'], oneOf(compatibilityModes)), `${what}.compatibility_mode is not a mode`);
  need(opt(o['enrichment_strategies'], (v) => listOf(v, oneOf(enrichmentStrategies))), `${what}.enrichment_strategies is not a list of strategies`);
  for (const k of ['partition_key_fields', 'ordering_key_fields', 'read_scopes', 'write_scopes']) need(opt(o[k], (v) => listOf(v, isString)), `${what}.${k} is not a list of strings`);
  need(
    opt(o['default_statistic'], (v) => isObject(v) && ['messages_per_minute', 'message_size', 'read_parallelism', 'write_parallelism'].every((k) => isNumber(v[k]))),
    `${what}.default_statistic must hold four numbers`,
  );
  need(opt(o['options'], (v) => isObject(v) && opt(v['retention_time'], isNumber)), `${what}.options.retention_time is not a number`);
  need(
    opt(o['authorization'], (v) => isObject(v) && isAttributeList(v['admins']) && isAttributeList(v['readers']) && isAttributeList(v['writers'])),
    `${what}.authorization must hold lists of attributes (admins, readers, writers)`,
  );
}

const isSubscriptionAuthorization = (v: unknown): boolean => isObject(v) && isAttributeList(v['admins']) && isAttributeList(v['readers']);
const isCursor = (c: unknown): boolean => isObject(c) && nonEmptyString(c['event_type']) && isString(c['partition']) && isString(c['offset']);

function checkSubscription(s: unknown, what: string): void {
  need(isObject(s), `${what} is not an object`);
  const o = s as Obj;
  for (const k of ['id', 'owning_application', 'consumer_group']) need(nonEmptyString(o[k]), `${what}.${k} is not a non-empty string`);
  need(isString(o['created_at']), `${what}.created_at is not a string`);
  need(oneOf(readFromValues)(o['read_from']), `${what}.read_from is not begin, end or cursors`);
  need(listOf(o['event_types'], nonEmptyString) && (o['event_types'] as unknown[]).length > 0, `${what}.event_types is not a non-empty list of names`);
  need(opt(o['initial_cursors'], (v) => listOf(v, isCursor)), `${what}.initial_cursors is not a list of cursors`);
  need(opt(o['authorization'], isSubscriptionAuthorization), `${what}.authorization must hold lists of attributes (admins, readers)`);
}

const isPartitionKey = (p: unknown): boolean => isObject(p) && nonEmptyString(p['event_type']) && isString(p['partition']);
const isCommittedCursor = (c: unknown): boolean => isPartitionKey(c) && isInt((c as Obj)['offset'], -1);
/** Session ids and incarnations: what limits.ts counts a subscription's runtime with. */
const isSessionId = (v: unknown): boolean => nonEmptyString(v) && v.length <= 128;
const isSession = (s: unknown): boolean =>
  isObject(s) && isSessionId(s['id']) && isInt(s['node']) && isString(s['incarnation']) && s['incarnation'].length <= 128 && isInt(s['openedAtMs']) && isInt(s['commitTimeoutMs']);
const isMemberList = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every(isPlacedMember);
const isDiskToken = (v: unknown): boolean => nonEmptyString(v) && v.length <= diskTokenBytesMax && /^[\x21-\x7e]+$/.test(v);
// Placements name replicas by member id (placement-types.ts; a node id is incarnation 0 of itself).
const isPlacementProposal = (v: unknown): boolean => isObject(v) && isMemberList(v['members']) && listOf(v['replicas'], isMemberList);
const isPlacement = (p: unknown): boolean =>
  isObject(p) && isInt(p['group'], 1) && isMemberList(p['replicas']) && opt(p['learners'], (v) => listOf(v, isPlacedMember)) && opt(p['moving'], (m) => isObject(m) && isPlacedMember(m['from']) && isPlacedMember(m['to'])) && opt(p['founders'], isMemberList);

/** The ops this version applies (commands.ts); the names are a wire format, only ever added to. */
export const metadataOps: ReadonlySet<string> = new Set([
  'event_type.create',
  'event_type.update',
  'event_type.delete',
  'feature.set',
  'subscription.create',
  'subscription.delete',
  'subscription.update',
  'stream.open',
  'stream.close',
  'stream.close_stale',
  'stream.release',
  'cursor.commit',
  'blacklist.set',
  'storage.create',
  'storage.delete',
  'timeline.create',
  'timeline.prepare',
  'timeline.commit',
  'cursor.reset',
  'partition.move',
  'partition.leader',
  'limits.set',
  'node.disk',
  'loss.accepted',
  'partition.loss',
] satisfies MetadataOp[]);

/** Checks a command's shape; throws a ShapeError naming the first problem. */
function checkCommandShape(cmd: unknown): void {
  need(isObject(cmd), 'the command is not an object');
  const c = cmd as Obj;
  const op = c['op'];
  switch (op) {
    case 'event_type.create':
      checkEventType(c['eventType'], 'eventType');
      need(isInt(c['partitionCount'], 1), `an event type has at least one partition, not ${String(c['partitionCount'])}`);
      need(opt(c['placement'], isPlacementProposal), 'placement is not a placement proposal');
      return;
    case 'event_type.update':
      checkEventType(c['eventType'], 'eventType');
      need(isString(c['basedOnUpdatedAt']) && typeof c['schemaChanged'] === 'boolean', 'basedOnUpdatedAt or schemaChanged is missing');
      return;
    case 'event_type.delete':
    case 'subscription.delete':
    case 'storage.delete':
      need(nonEmptyString(c[op === 'event_type.delete' ? 'name' : 'id']), `${op} names nothing`);
      return;
    case 'feature.set':
      need(nonEmptyString(c['feature']) && typeof c['enabled'] === 'boolean', 'feature.set needs a feature and a boolean');
      return;
    case 'subscription.create':
      checkSubscription(c['subscription'], 'subscription');
      return;
    case 'subscription.update':
      need(nonEmptyString(c['id']) && isSubscriptionAuthorization(c['authorization']), 'subscription.update needs an id and an authorization with admins and readers');
      return;
    case 'stream.open':
      need(nonEmptyString(c['subscription']) && isSession(c['session']) && listOf(c['starts'], isCommittedCursor), 'stream.open needs a subscription, a session and start cursors');
      return;
    case 'stream.close':
      need(nonEmptyString(c['subscription']) && nonEmptyString(c['session']) && isInt(c['atMs']), 'stream.close needs a subscription, a session and a time');
      return;
    case 'stream.close_stale':
      need(isInt(c['node']) && isString(c['incarnation']) && isInt(c['atMs']), 'stream.close_stale needs a node, an incarnation and a time');
      return;
    case 'stream.release':
      need(nonEmptyString(c['subscription']) && nonEmptyString(c['session']) && listOf(c['partitions'], isPartitionKey), 'stream.release needs a subscription, a session and partitions');
      return;
    case 'cursor.commit':
      need(nonEmptyString(c['subscription']) && nonEmptyString(c['session']) && isInt(c['atMs']) && listOf(c['cursors'], isCommittedCursor), 'cursor.commit needs a subscription, a session, a time and cursors');
      return;
    case 'cursor.reset':
      need(nonEmptyString(c['subscription']) && listOf(c['cursors'], isCommittedCursor), 'cursor.reset needs a subscription and cursors');
      return;
    case 'blacklist.set':
      need(oneOf(blacklistTypes)(c['type']) && nonEmptyString(c['name']) && typeof c['blocked'] === 'boolean', 'blacklist.set needs a type, a name and a boolean');
      return;
    case 'storage.create': {
      const st = c['storage'];
      need(isObject(st) && nonEmptyString(st['id']) && st['storage_type'] === 'broker' && isObject(st['broker_configuration']), 'storage.create needs a broker storage');
      return;
    }
    case 'timeline.create':
      need(
        nonEmptyString(c['eventType']) && nonEmptyString(c['id']) && nonEmptyString(c['storage_id']) && isString(c['at']) && listOf(c['starts'], (n) => isInt(n)) && opt(c['placement'], isPlacementProposal),
        'timeline.create needs an event type, an id, a storage, a time and starts',
      );
      return;
    case 'timeline.prepare':
      need(
        nonEmptyString(c['eventType']) && nonEmptyString(c['id']) && nonEmptyString(c['storage_id']) && isString(c['at']) && opt(c['placement'], isPlacementProposal),
        'timeline.prepare needs an event type, an id, a storage and a time',
      );
      return;
    case 'timeline.commit':
      need(nonEmptyString(c['eventType']) && nonEmptyString(c['id']) && isString(c['at']) && listOf(c['starts'], (n) => isInt(n)), 'timeline.commit needs an event type, an id, a time and starts');
      return;
    case 'limits.set':
      need(isMetadataLimits(c['limits']), 'limits.set needs every bound as a positive integer');
      return;
    case 'partition.move':
      need(isInt(c['group'], 1) && oneOf(['add_learner', 'promote', 'remove', 'cancel', 'rejoin'])(c['step']) && isPlacedMember(c['from']) && isPlacedMember(c['to']), 'partition.move needs a group, a step and two members');
      return;
    case 'partition.leader':
      need(isInt(c['group'], 1) && isPlacedMember(c['leader']), 'partition.leader needs a group and a member');
      return;
    case 'node.disk':
      need(isNodeId(c['node']) && isDiskToken(c['disk']), 'node.disk needs a node and a disk token');
      need(c['member'] === undefined || (isMemberId(c['member']) && nodeOfMember(c['member'] as number) === c['node']), 'node.disk: member must be a metadata member id of the node');
      return;
    case 'partition.loss': {
      const seen = c['seen'] as Record<string, unknown> | undefined;
      need(
        isInt(c['group'], 1) && isPlacedMember(c['keep']) && isInt(c['floor']) && typeof seen === 'object' && seen !== null && listOf(seen['replicas'], isPlacedMember) && listOf(seen['learners'], isPlacedMember),
        'partition.loss needs a group, the kept member, the placement seen and a floor',
      );
      const problem = lossRecordProblem(c['loss']);
      need(problem === undefined, `partition.loss: ${problem}`);
      return;
    }
    case 'loss.accepted': {
      const problem = lossRecordProblem(c['loss']);
      need(problem === undefined, `loss.accepted: ${problem}`);
      return;
    }
    default:
      // Unknown ops (a newer member's) are the state machine's to refuse, alike on every node.
      need(isString(op), 'the command has no op');
  }
}

/** Why a command cannot be applied, or undefined when its shape is right. */
export function commandProblem(cmd: unknown): string | undefined {
  try {
    checkCommandShape(cmd);
    return undefined;
  } catch (err) {
    if (!(err instanceof ShapeError)) throw err;
    const op = isObject(cmd) && isString(cmd['op']) ? cmd['op'].slice(0, 64) : undefined;
    return op === undefined ? err.message : `malformed ${op}: ${err.message}`;
  }
}

function checkStorage(s: unknown, partitionCount: number, what: string): void {
  need(isObject(s), `${what} is not an object`);
  const o = s as Obj;
  need(isInt(o['topic'], 1) && isInt(o['timeline'], 1), `${what}: topic and timeline must be positive integers`);
  need(listOf(o['partitions'], isString) && partitionCount >= 1, `${what}.partitions is not a list of partition ids`);
  need(opt(o['placement'], (v) => listOf(v, isPlacement) && (v as unknown[]).length === partitionCount), `${what}.placement is not one placement per partition`);
  need(
    opt(o['timelines'], (v) =>
      listOf(
        v,
        (t) =>
          isObject(t) &&
          nonEmptyString(t['id']) &&
          isInt(t['order'], 1) &&
          nonEmptyString(t['storage_id']) &&
          isInt(t['topic'], 1) &&
          listOf(t['starts'], (n) => isInt(n)) &&
          (t['starts'] as unknown[]).length === partitionCount &&
          opt(t['placement'], (p) => listOf(p, isPlacement) && (p as unknown[]).length === partitionCount),
      ),
    ),
    `${what}.timelines is not a list of timelines`,
  );
  need(
    opt(o['pendingTimeline'], (t) => isObject(t) && nonEmptyString(t['id']) && nonEmptyString(t['storage_id']) && isString(t['at']) && opt(t['placement'], (p) => listOf(p, isPlacement) && (p as unknown[]).length === partitionCount)),
    `${what}.pendingTimeline is not a pending timeline switch`,
  );
}

function checkSnapshotShape(snap: unknown): void {
  need(isObject(snap), 'the snapshot state is not an object');
  const s = snap as Obj;
  need(isInt(s['nextTopic'], 1) && opt(s['nextGroup'], (v) => isInt(v, 1)), 'nextTopic and nextGroup must be positive integers');
  need(
    opt(s['disks'], (v) => listOf(v, (d) => isObject(d) && isNodeId(d['node']) && isDiskToken(d['disk']) && isInt(d['firstGroup'], 1) && opt(d['member'], isMemberId) && opt(d['formerMembers'], (f) => listOf(f, isMemberId) && (f as unknown[]).length <= formerMembersMax)) && new Set((v as Obj[]).map((d) => d['node'])).size === (v as unknown[]).length && (v as unknown[]).length <= registeredDisksMax),
    'disks is not a list of disk registrations, one per node',
  );
  const losses = s['acceptedLosses'] === undefined ? undefined : acceptedLossesProblem(s['acceptedLosses']);
  need(losses === undefined, losses!);
  need(Array.isArray(s['eventTypes']), 'eventTypes is not a list');
  const names = new Set<string>();
  (s['eventTypes'] as unknown[]).forEach((rec, i) => {
    need(isObject(rec), `eventTypes[${i}] is not an object`);
    const r = rec as Obj;
    checkEventType(r['eventType'], `eventTypes[${i}].eventType`);
    const name = (r['eventType'] as Obj)['name'] as string;
    need(!names.has(name), `eventTypes[${i}]: event type "${name}" is listed twice`);
    names.add(name);
    need(Array.isArray(r['schemas']) && (r['schemas'] as unknown[]).length > 0, `eventTypes[${i}].schemas is not a non-empty list`);
    (r['schemas'] as unknown[]).forEach((sc, k) => checkSchema(sc, `eventTypes[${i}].schemas[${k}]`));
    const storage = r['storage'];
    checkStorage(storage, isObject(storage) && Array.isArray(storage['partitions']) ? storage['partitions'].length : 0, `eventTypes[${i}].storage`);
  });
  need(opt(s['features'], (v) => isObject(v) && Object.values(v).every((b) => typeof b === 'boolean')), 'features is not a map of booleans');
  const subscriptions = new Set<string>();
  need(opt(s['subscriptions'], Array.isArray), 'subscriptions is not a list');
  ((s['subscriptions'] as unknown[] | undefined) ?? []).forEach((sub, i) => {
    checkSubscription(sub, `subscriptions[${i}]`);
    const o = sub as Obj;
    need(!subscriptions.has(o['id'] as string), `subscriptions[${i}]: id "${String(o['id'])}" is listed twice`);
    subscriptions.add(o['id'] as string);
    // The state machine asserts this (event types of a subscription cannot be deleted).
    for (const et of o['event_types'] as string[]) need(names.has(et), `subscriptions[${i}] names the missing event type "${et}"`);
  });
  need(
    opt(s['runtimes'], (v) =>
      listOf(
        v,
        (rt) =>
          isObject(rt) &&
          nonEmptyString(rt['id']) &&
          listOf(rt['sessions'], isSession) &&
          listOf(rt['slots'], (sl) => isPartitionKey(sl) && opt((sl as Obj)['session'], isString) && opt((sl as Obj)['releasingFrom'], isString)) &&
          listOf(rt['committed'], isCommittedCursor) &&
          listOf(rt['closed'], (c) => isObject(c) && nonEmptyString(c['id']) && isInt(c['closedAtMs']) && isInt(c['commitTimeoutMs']) && listOf(c['partitions'], isString)),
      ),
    ),
    'runtimes is not a list of subscription runtimes',
  );
  need(opt(s['blacklist'], (v) => isObject(v) && Object.entries(v).every(([k, names]) => oneOf(blacklistTypes)(k) && listOf(names, isString))), 'blacklist is not a map of name lists');
  need(
    opt(s['storages'], (v) => listOf(v, (st) => isObject(st) && nonEmptyString(st['id']) && st['storage_type'] === 'broker' && isObject(st['broker_configuration']))),
    'storages is not a list of broker storages',
  );
  // Bounds of an older version (fewer keys) are ignored by restore, which keeps the defaults then.
  need(opt(s['limits'], isObject), 'limits is not an object');
}

/** Why a snapshot's state cannot be restored, or undefined when its shape is right. */
export function snapshotProblem(snap: unknown): string | undefined {
  try {
    checkSnapshotShape(snap);
    return undefined;
  } catch (err) {
    if (err instanceof ShapeError) return err.message;
    throw err;
  }
}
