/**
 * The blacklist (GET /settings/blacklist, PUT/DELETE /settings/blacklist/{type}/{name}): replicated
 * metadata, so every node refuses the same producers and consumers. What a blocked entry does is
 * decided where it applies (auth/resource-access.ts; open streams are ended by the composition root
 * when an entry is applied).
 */
import { problems } from '../core/problem.js';
import { blacklistTypes } from '../metadata/types.js';
/** Longest name accepted (an app id or an event type name). */
const nameLengthMax = 1024;
export class BlacklistService {
    #reader;
    #proposer;
    constructor(reader, proposer) {
        this.#reader = reader;
        this.#proposer = proposer;
    }
    view() {
        const b = this.#reader().blacklist();
        return {
            consumers: { apps: b.CONSUMER_APP, event_types: b.CONSUMER_ET },
            producers: { apps: b.PRODUCER_APP, event_types: b.PRODUCER_ET },
        };
    }
    async set(type, name, blocked) {
        if (!blacklistTypes.includes(type)) {
            throw problems.badRequest(`Unknown blacklist type "${type}"; known types: ${blacklistTypes.join(', ')}`);
        }
        if (name === '' || name.length > nameLengthMax)
            throw problems.badRequest(`A blacklist name must have 1 to ${nameLengthMax} characters`);
        const r = await this.#proposer.propose({ op: 'blacklist.set', type: type, name, blocked });
        if (!r.ok)
            throw problems.conflict(r.detail);
    }
}
//# sourceMappingURL=blacklist-service.js.map