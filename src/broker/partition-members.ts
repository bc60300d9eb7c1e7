/**
 * Replaces the partition members of wiped data directories, on the metadata leader, around the pure
 * plan (metadata/partition-member-replacement.ts): every round (main.ts's 250 ms timer, and after a
 * registration is applied) the leader proposes the plan's commands, one per group, each at most once
 * at a time. The rest of each replacement is a replica move that the partition's leader carries out
 * (replica-mover.ts). Nothing is remembered across rounds but what was logged: the placements and
 * the registrations are the state, so a new metadata leader resumes where the replacement stood.
 */
import type { Logger } from 'pino';
import { memberLabel } from '../core/member-id.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { DiskRegistration } from '../metadata/disk-registry.js';
import { partitionReplacements, type ReplacementCommand } from '../metadata/partition-member-replacement.js';
import type { PartitionPlacement } from '../metadata/placement-types.js';

export interface PartitionMemberReplacerOptions {
  /** Whether this node leads the metadata group (only the leader proposes). */
  readonly isLeader: () => boolean;
  /** Every placed partition, as the applied metadata says. */
  readonly placements: () => Iterable<{ readonly placement: PartitionPlacement }>;
  /** The applied `node.disk` registrations. */
  readonly registrations: () => Iterable<DiskRegistration>;
  readonly propose: (cmd: MetadataCommand) => Promise<{ ok: boolean; detail?: string }>;
  readonly logger: Logger;
}

export class PartitionMemberReplacer {
  readonly #o: PartitionMemberReplacerOptions;
  /** Groups with a command proposed and not answered yet. */
  readonly #proposing = new Set<number>();

  constructor(o: PartitionMemberReplacerOptions) {
    this.#o = o;
  }

  /** One round; returns the commands proposed (for tests). */
  round(): ReplacementCommand[] {
    if (!this.#o.isLeader()) return [];
    const proposed: ReplacementCommand[] = [];
    for (const cmd of partitionReplacements(this.#o.placements(), this.#o.registrations())) {
      if (this.#proposing.has(cmd.group)) continue;
      this.#proposing.add(cmd.group);
      proposed.push(cmd);
      const what = cmd.step === 'cancel' ? `cancelling the move to ${memberLabel(cmd.to)}, a member whose data directory was wiped since` : `replacing member ${memberLabel(cmd.from)}, whose data directory was wiped, by ${memberLabel(cmd.to)}: adding it as a learner`;
      this.#o
        .propose(cmd)
        .then((r) => {
          // Refused: already done, or a move of the group is in flight (the next round looks again).
          if (r.ok) this.#o.logger.info({ group: cmd.group, step: cmd.step, from: cmd.from, to: cmd.to }, `partition group ${cmd.group}: ${what}`);
          else this.#o.logger.debug({ group: cmd.group, step: cmd.step, detail: r.detail }, 'partition member replacement: the metadata refused the step; looked at again next round');
        })
        .catch((err: unknown) => this.#o.logger.warn({ err, group: cmd.group }, 'partition member replacement: proposing the step failed; retried'))
        .finally(() => this.#proposing.delete(cmd.group));
    }
    return proposed;
  }
}
