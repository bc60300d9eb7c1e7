/**
 * Which replica keeps its log when an operator accepts the loss of a partition whose every replica is
 * damaged (replication factor > 1; docs/replication.md, "Accepting the loss of a partition whose every
 * replica is damaged"). PURE: the facts are what each replica's node answered; the action around it is
 * not built yet (that section says what is).
 *
 * Why a rule at all. A damaged member neither votes nor leads until a healthy leader has sent it what
 * it lacks (src/raft, `damaged`). When every replica of a partition is damaged (every node holding
 * one lost its raft marker or the tail of its write-ahead log, as after a power cut of the whole
 * cluster on disks that lie about their flushes), nobody can, and the partition keeps its records but
 * never takes a write again. Accepting the loss makes one replica's log the partition's: it becomes the
 * only voter and keeps what it holds, the others rejoin it as new empty learners and copy that log, so
 * no replica keeps a tail the partition no longer has. Which one: the one whose log is newest, by its
 * last entry's (term, index) as Raft's election restriction orders logs (it holds every entry any
 * other replica could have had committed at a lower term), unless the operator names another.
 *
 * Refused, naming why:
 * - while the healthy replicas (not damaged) are voters enough to elect a leader: the partition is not
 *   lost, they repair the others. Fewer (two of three damaged) cannot, and a damaged member does not
 *   vote: stuck like a group whose every replica is damaged, and taken alike; a healthy replica may
 *   keep its log (by the same order: it may be a follower that was behind). While a move is in flight,
 *   any healthy replica refuses (the group's configuration may not be the placement's voters).
 * - while a replica does not answer: it may be healthy, or hold a newer log. Bring it back, even with an
 *   empty data directory (it then answers, damaged and empty).
 * - while a replica is still learning its term floor (it has some): try again in a moment.
 * - for a replica the operator names that is not one of the group's.
 */
import { nodeOfMember } from '../core/member-id.js';

/** What the node of one replica answered about it (absent fields: it did not answer). */
export interface ReplicaReport {
  /** The replica's member id (placement-types.ts). */
  readonly member: number;
  /** Whether its node answered for it (reachable, and the replica is open there). */
  readonly answered: boolean;
  readonly damaged?: boolean;
  readonly probing?: boolean;
  /** Its log's last entry: (term, index); what the choice compares. */
  readonly lastTerm?: number;
  readonly lastIndex?: number;
}

export interface GroupLossFacts {
  /** The partition's placement (member ids), or undefined when no partition is replicated by the group. */
  readonly placement: { readonly replicas: readonly number[]; readonly learners: readonly number[] } | undefined;
  /** One report per member of the placement (voters and learners); a missing one counts as not answered. */
  readonly reports: readonly ReplicaReport[];
  /** The node the operator named (`--replica`), if any: its replica keeps its log. */
  readonly named?: number;
  /** A move is in flight (the group's configuration may differ from the placement's voters). */
  readonly moving?: boolean;
}

export type GroupLossVerdict =
  | { readonly allowed: true; readonly keep: number; readonly rejoin: readonly number[]; /** The kept replica is not damaged (the others are too few to elect with it). */ readonly healthy: boolean }
  | { readonly allowed: false; readonly status: 404 | 409; readonly detail: string };

const refuse = (status: 404 | 409, detail: string): GroupLossVerdict => ({ allowed: false, status, detail });
const on = (member: number): string => `node ${nodeOfMember(member)}`;

/** Whether log (t1, i1) is newer than (t2, i2): a later last term, or the same term and a longer log. */
export const newerLog = (t1: number, i1: number, t2: number, i2: number): boolean => t1 > t2 || (t1 === t2 && i1 > i2);

export function groupLossChoice(group: number, f: GroupLossFacts): GroupLossVerdict {
  const p = f.placement;
  if (p === undefined) return refuse(404, `No partition is replicated by group ${group}; GET /cluster lists the groups`);
  const members = [...p.replicas, ...p.learners.filter((m) => !p.replicas.includes(m))];
  const report = new Map(f.reports.map((r) => [r.member, r]));
  const silent = members.filter((m) => report.get(m)?.answered !== true);
  const healthy = members.filter((m) => report.get(m)?.answered === true && report.get(m)?.damaged !== true);
  // Healthy voters that are a majority of the voters elect a leader, which repairs the others. Fewer
  // cannot (a damaged member does not vote): stuck like a group whose every replica is damaged. With a
  // move in flight the group's configuration may not be the placement's voters yet: any healthy replica refuses then.
  const healthyVoters = healthy.filter((m) => p.replicas.includes(m));
  const canElect = healthyVoters.length > p.replicas.length / 2;
  if (canElect || (healthy.length > 0 && (f.moving === true || p.learners.length > 0))) {
    return refuse(
      409,
      `Group ${group} has a replica that is not damaged (on ${healthy.map(on).join(', ')}): ` +
        (canElect ? 'enough to elect a leader, so the partition is not lost: its healthy replicas repair the others. ' : 'and a move is in flight. ') +
        'Accepting a loss is only for a partition whose healthy replicas are too few to elect a leader (every one damaged, or two of three)',
    );
  }
  if (silent.length > 0) {
    return refuse(
      409,
      `The replica(s) of group ${group} on ${silent.map(on).join(', ')} did not answer: each may be healthy or hold a newer log. ` +
        'Bring its node back (even with an empty data directory: it then answers, damaged) and ask again',
    );
  }
  const probing = members.filter((m) => report.get(m)!.probing === true);
  if (probing.length > 0) return refuse(409, `The replica(s) of group ${group} on ${probing.map(on).join(', ')} are still learning their term floor; try again in a moment`);
  let keep: number | undefined;
  if (f.named !== undefined) {
    keep = members.find((m) => nodeOfMember(m) === f.named);
    if (keep === undefined) return refuse(409, `Node ${f.named} holds no replica of group ${group}; its replicas are on ${members.map(on).join(', ')}`);
  } else {
    // Placement order breaks ties: the preferred leader first.
    for (const m of members) {
      const r = report.get(m)!;
      const k = keep === undefined ? undefined : report.get(keep)!;
      if (k === undefined || newerLog(r.lastTerm ?? 0, r.lastIndex ?? 0, k.lastTerm ?? 0, k.lastIndex ?? 0)) keep = m;
    }
  }
  return { allowed: true, keep: keep!, rejoin: members.filter((m) => m !== keep), healthy: report.get(keep!)!.damaged !== true };
}
