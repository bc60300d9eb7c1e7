/**
 * The blacklist (GET /settings/blacklist, PUT/DELETE /settings/blacklist/{type}/{name}): replicated
 * metadata, so every node refuses the same producers and consumers. What a blocked entry does is
 * decided where it applies (auth/resource-access.ts; open streams are ended by the composition root
 * when an entry is applied).
 */
import { problems } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import { blacklistTypes, type BlacklistType } from '../metadata/types.js';

export interface BlacklistReader {
  blacklist(): Record<BlacklistType, string[]>;
}

export interface BlacklistView {
  consumers: { apps: string[]; event_types: string[] };
  producers: { apps: string[]; event_types: string[] };
}

/** Longest name accepted (an app id or an event type name). */
const nameLengthMax = 1024;

export class BlacklistService {
  readonly #reader: () => BlacklistReader;
  readonly #proposer: { propose(cmd: MetadataCommand): Promise<ApplyResult> };

  constructor(reader: () => BlacklistReader, proposer: { propose(cmd: MetadataCommand): Promise<ApplyResult> }) {
    this.#reader = reader;
    this.#proposer = proposer;
  }

  view(): BlacklistView {
    const b = this.#reader().blacklist();
    return {
      consumers: { apps: b.CONSUMER_APP, event_types: b.CONSUMER_ET },
      producers: { apps: b.PRODUCER_APP, event_types: b.PRODUCER_ET },
    };
  }

  async set(type: string, name: string, blocked: boolean): Promise<void> {
    if (!(blacklistTypes as readonly string[]).includes(type)) {
      throw problems.badRequest(`Unknown blacklist type "${type}"; known types: ${blacklistTypes.join(', ')}`);
    }
    if (name === '' || name.length > nameLengthMax) throw problems.badRequest(`A blacklist name must have 1 to ${nameLengthMax} characters`);
    const r = await this.#proposer.propose({ op: 'blacklist.set', type: type as BlacklistType, name, blocked });
    if (!r.ok) throw problems.conflict(r.detail);
  }
}
