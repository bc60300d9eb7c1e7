/**
 * Records an accepted loss in the metadata (`loss.accepted`, metadata/accepted-losses.ts), so that
 * every node lists it for good (GET /cluster, `accepted_losses`), not only the log of the node that
 * accepted it.
 *
 * The acceptance happens when something is already wrong: the metadata group may have no leader yet
 * (a whole cluster restarting after a power cut), or be the very group whose loss was accepted and not
 * commit for a moment. So the record is proposed until the metadata this node applies holds it, in the
 * background; until then the node lists it as not yet recorded (LossService.view). A process that
 * stops before then leaves only its log line (docs/replication.md says so).
 */
import type { MetadataCommand } from '../metadata/commands.js';
import type { LossRecord } from '../metadata/accepted-losses.js';
import type { ApplyResult } from '../metadata/state-machine.js';

export interface LossRecordDeps {
  readonly propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
  /** Whether the metadata this node applied holds a record with this id. */
  readonly recorded: (id: string) => boolean;
  readonly sleep: (ms: number) => Promise<void>;
  readonly stopped: () => boolean;
  readonly retryMs: number;
  readonly logger: { warn(obj: object, msg: string): void };
}

/** Proposes `loss` until the applied metadata holds it (or the node stops). Never throws. */
export async function recordLoss(d: LossRecordDeps, loss: LossRecord): Promise<void> {
  for (let attempt = 0; !d.stopped(); attempt++) {
    if (d.recorded(loss.id)) return;
    try {
      const r = await d.propose({ op: 'loss.accepted', loss });
      // Refused (a bug: the record is built here): retrying would not help; the log line stays.
      if (!r.ok) {
        d.logger.warn({ loss, reason: r.reason, detail: r.detail }, 'recording an accepted data loss in the metadata was refused; only the log line records it');
        return;
      }
    } catch (err) {
      if (attempt % 10 === 0) d.logger.warn({ err, lossId: loss.id }, 'recording an accepted data loss in the metadata failed (no metadata leader yet?); retrying');
    }
    // The proposal's answer comes from the leader; this node applies the entry a little later.
    if (!d.recorded(loss.id)) await d.sleep(d.retryMs);
  }
}
