/**
 * The record of data an operator knowingly gave up (docs/replication.md, "Accepting the loss of a sole
 * replica"). PURE.
 *
 * Why in the metadata. The node that accepted a loss logs it, but a log line is on one node and
 * rotates away; months later an operator asking "was anything given up here?" must be able to see it
 * from any node, after any restart. So the node that accepted it proposes `loss.accepted`, and every
 * node applies the record into its metadata state, which is replicated, snapshotted and restored like
 * the rest of it. The list is bounded: the newest `acceptedLossesKept` records, and a count of the older
 * ones that were let go (so "none" is never claimed when some were).
 *
 * A record carries an id drawn by its proposer: a proposal retried (its answer was lost) is recorded
 * once.
 */

/** Where the loss was: a partition's group, or the metadata group itself (BROOK_ACCEPT_METADATA_LOSS). */
export type LossScope = 'partition' | 'metadata';

export interface LossRecord {
  /** Drawn by the proposer; the same record proposed again is kept once. */
  id: string;
  scope: LossScope;
  /** The node whose replica was kept. */
  node: number;
  /** The partition (absent for the metadata group). */
  event_type?: string;
  partition?: string;
  /** Its Raft group (0: the metadata group). */
  group: number;
  /** When the loss was accepted (ISO 8601, the accepting node's clock). */
  at: string;
  /** What the replica held, and kept: its newest offset (partitions only; BEGIN when empty) and last Raft index. */
  kept: { newest_offset?: string; last_index: number };
  /** Its damage mark as it was: the index up to which it may have acknowledged entries, the term, what was found. */
  damage: { index: number; term: number; reason: string };
  /** The term it was stuck at, and the term it leads at after (0: it did not lead within the wait). */
  term_before: number;
  term: number;
  /**
   * A partition of several replicas (partition.loss): the command's term floor and the nodes whose
   * replicas rejoin empty, kept so that a node that gets the record within a metadata snapshot acts on
   * it as on the command (src/broker/group-loss-apply.ts). Absent in records of a sole replica, and in
   * those written before.
   */
  floor?: number;
  rejoin?: number[];
}

/** The records kept: the newest `acceptedLossesKept`, oldest first, and how many older ones were let go. */
export interface AcceptedLosses {
  readonly records: readonly LossRecord[];
  readonly older: number;
}

export const acceptedLossesKept = 100;
/** Bounds on a record's strings (in UTF-16 code units, as String.length counts): what a command can make every node hold. */
export const lossIdLengthMax = 128;
export const lossTextLengthMax = 1024;

export const noAcceptedLosses: AcceptedLosses = { records: [], older: 0 };

/** The list with `r` recorded: unchanged when a record with its id is kept already. */
export function withLoss(list: AcceptedLosses, r: LossRecord, kept = acceptedLossesKept): AcceptedLosses {
  if (list.records.some((x) => x.id === r.id)) return list;
  const records = [...list.records, r];
  const drop = Math.max(0, records.length - kept);
  return { records: records.slice(drop), older: list.older + drop };
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const text = (v: unknown, max = lossTextLengthMax): v is string => typeof v === 'string' && v.length <= max;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why `v` is not a loss record (the state machine refuses it alike on every node), or undefined. */
export function lossRecordProblem(v: unknown): string | undefined {
  if (!isObj(v)) return 'the loss is not an object';
  if (!text(v['id'], lossIdLengthMax) || v['id'] === '') return 'loss.id is not a non-empty string of at most 128 characters';
  if (v['scope'] !== 'partition' && v['scope'] !== 'metadata') return 'loss.scope is not partition or metadata';
  if (!isInt(v['node']) || v['node'] < 1) return 'loss.node is not a node id';
  if (!isInt(v['group']) || v['group'] >= 2 ** 32) return 'loss.group is not a group id';
  if (v['scope'] === 'partition' && (!text(v['event_type']) || !text(v['partition']))) return 'the loss of a partition names its event type and partition';
  if (v['scope'] === 'metadata' && v['group'] !== 0) return 'the loss of the metadata group is of group 0';
  if (!text(v['at'])) return 'loss.at is not a string';
  const kept = v['kept'];
  if (!isObj(kept) || !isInt(kept['last_index']) || (kept['newest_offset'] !== undefined && !text(kept['newest_offset']))) return 'loss.kept needs last_index (and newest_offset, a string)';
  const d = v['damage'];
  if (!isObj(d) || !isInt(d['index']) || !isInt(d['term']) || !text(d['reason'])) return 'loss.damage needs index, term and reason';
  if (!isInt(v['term_before']) || !isInt(v['term'])) return 'loss.term_before and loss.term must be integers';
  if (v['floor'] !== undefined && !isInt(v['floor'])) return 'loss.floor must be an integer';
  if (v['rejoin'] !== undefined && (!Array.isArray(v['rejoin']) || !v['rejoin'].every((n) => isInt(n) && n >= 1))) return 'loss.rejoin must be node ids';
  return undefined;
}

/** Why a snapshot's list cannot be restored, or undefined. */
export function acceptedLossesProblem(v: unknown): string | undefined {
  if (!isObj(v) || !Array.isArray(v['records']) || !isInt(v['older'])) return 'acceptedLosses needs records and older';
  if (v['records'].length > acceptedLossesKept) return `acceptedLosses holds more than ${acceptedLossesKept} records`;
  for (const r of v['records']) {
    const p = lossRecordProblem(r);
    if (p !== undefined) return `acceptedLosses: ${p}`;
  }
  return undefined;
}

/** The record's known fields only (a member's extra fields are not kept). Call on a record that passed lossRecordProblem. */
export function cleanLoss(r: LossRecord): LossRecord {
  return {
    id: r.id,
    scope: r.scope,
    node: r.node,
    ...(r.event_type === undefined ? {} : { event_type: r.event_type }),
    ...(r.partition === undefined ? {} : { partition: r.partition }),
    group: r.group,
    at: r.at,
    kept: { ...(r.kept.newest_offset === undefined ? {} : { newest_offset: r.kept.newest_offset }), last_index: r.kept.last_index },
    damage: { index: r.damage.index, term: r.damage.term, reason: r.damage.reason },
    term_before: r.term_before,
    term: r.term,
    ...(Number.isSafeInteger(r.floor) && (r.floor as number) >= 0 ? { floor: r.floor } : {}),
    ...(Array.isArray(r.rejoin) && r.rejoin.every((n) => Number.isSafeInteger(n) && n >= 1) ? { rejoin: [...r.rejoin] } : {}),
  };
}
