/**
 * Replacing a partition group's member whose data directory was wiped by the member the new
 * directory runs as: the metadata commands the metadata leader proposes. PURE.
 * (docs/partition-replication.md, "A wiped directory rejoins partition groups as a new member"; the
 * metadata group does the same for itself in member-replacement.ts.)
 *
 * A directory that starts empty without founding runs under a new member id and registers it
 * (`node.disk` with `member`, disk-registry.ts). From then on every member of that node a placement
 * lists, other than the registered one, is a former member: what it voted or acknowledged must never
 * be taken for the new directory's word. A replacement is a move on the same node, from the former
 * member to the new one: `partition.move add_learner {from, to}` here, and the rest of the move (add
 * the learner, promote it once caught up, remove the former member, record `remove`) is carried out by
 * the partition's leader like any other move (replica-move-plan.ts), one configuration change at a
 * time.
 *
 * Stateless, like the moves: the placements and the registrations are the whole state, so a new
 * metadata leader proposes the same commands, and a command already applied is refused by the state
 * machine (a second move while one is in flight is a conflict). A move in flight is left to finish,
 * unless the member it adds is itself a former one (its node was wiped during the move): that move is
 * cancelled, and the replacement follows.
 */
import { nodeOfMember } from '../core/member-id.js';
import type { MetadataCommand } from './commands.js';
import type { PartitionPlacement } from './placement-types.js';

export type ReplacementCommand = Extract<MetadataCommand, { op: 'partition.move' }>;

/**
 * Whether `member` is a former member of its node: the node's applied `node.disk` registration
 * (`registration`, that node's) names another member of it. Its directory was wiped since, so nothing
 * of any group is left under it; the replacement below removes it from the placements in time.
 */
export function isFormerMember(member: number, registration: { readonly node: number; readonly member?: number | undefined } | undefined): boolean {
  const now = registration?.member;
  return now !== undefined && registration!.node === nodeOfMember(member) && nodeOfMember(now) === registration!.node && now !== member;
}

/**
 * The next command for each group that lists a former member: `registrations` are the applied
 * `node.disk` registrations (a node with no `member` registered runs its original member, the node id,
 * and is never replaced).
 */
export function partitionReplacements(
  placements: Iterable<{ readonly placement: PartitionPlacement }>,
  registrations: Iterable<{ readonly node: number; readonly member?: number | undefined }>,
): ReplacementCommand[] {
  // Each node's registration that names a member of it (the member its directory runs now).
  const byNode = new Map<number, { readonly node: number; readonly member?: number | undefined }>();
  for (const r of registrations) if (r.member !== undefined && nodeOfMember(r.member) === r.node) byNode.set(r.node, r);
  if (byNode.size === 0) return [];
  const former = (m: number): boolean => isFormerMember(m, byNode.get(nodeOfMember(m)));
  const out: ReplacementCommand[] = [];
  for (const { placement: p } of placements) {
    const moving = p.moving;
    if (moving !== undefined) {
      // The member a move adds was wiped before it became a voter: cancel it; the move can be made again.
      if (former(moving.to) && !p.replicas.includes(moving.to)) out.push({ op: 'partition.move', group: p.group, step: 'cancel', from: moving.from, to: moving.to });
      continue;
    }
    const gone = p.replicas.find(former);
    if (gone !== undefined) out.push({ op: 'partition.move', group: p.group, step: 'add_learner', from: gone, to: byNode.get(nodeOfMember(gone))!.member! });
  }
  return out;
}
