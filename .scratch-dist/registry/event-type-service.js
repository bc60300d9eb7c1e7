/**
 * The event-type registry service: checks a request against the registry rules, turns it into a
 * metadata command, and proposes it. Reads come from the applied metadata state.
 */
import { problems } from '../core/problem.js';
import { proposePlacement } from '../metadata/placement.js';
import { validateEventTypeCreate, validateEventTypeUpdate } from './index.js';
function failIfRejected(r) {
    if (r.ok)
        return;
    switch (r.reason) {
        case 'exists':
            throw problems.eventTypeExists(r.detail);
        case 'not_found':
            throw problems.eventTypeNotFound(r.detail);
        case 'conflict':
            throw problems.conflict(r.detail);
        case 'in_use':
            throw problems.eventTypeHasSubscriptions(r.detail);
        case 'limit':
        case 'invalid':
        case 'no_slots':
            // Never a silent success: a bound of the metadata, or e.g. a placement the state machine refused.
            throw problems.unprocessable(r.detail);
    }
}
export { parsePaging } from '../core/paging.js';
export class EventTypeService {
    #reader;
    #proposer;
    #options;
    #clock;
    #features;
    /** The cluster's members, to place new partitions over; absent: commands carry no placement (legacy layout). */
    #members;
    constructor(deps) {
        this.#features = deps.features ?? { isEnabled: () => false };
        this.#members = deps.members;
        this.#reader = deps.reader;
        this.#proposer = deps.proposer;
        this.#options = deps.options;
        this.#clock = deps.clock;
    }
    #now() {
        return new Date(this.#clock.nowMs()).toISOString();
    }
    record(name) {
        const rec = this.#reader.eventType(name);
        if (rec === undefined)
            throw problems.eventTypeNotFound(`EventType "${name}" does not exist.`);
        return rec;
    }
    /** The event type, or undefined when there is none of that name. */
    find(name) {
        return this.#reader.eventType(name)?.eventType;
    }
    list() {
        return [...this.#reader.eventTypes()].map((r) => r.eventType);
    }
    get(name) {
        return this.record(name).eventType;
    }
    /** Creates the event type and returns its name. */
    async create(body) {
        if (this.#features.isEnabled('disable_event_type_creation')) {
            throw problems.unavailable('Event type creation is disabled by the feature toggle disable_event_type_creation');
        }
        const { eventType, partitionCount } = validateEventTypeCreate(body, this.#options, this.#now());
        if (this.#reader.eventType(eventType.name) !== undefined) {
            throw problems.eventTypeExists(`EventType "${eventType.name}" already exists.`);
        }
        const limits = this.#reader.limits();
        if (this.#reader.eventTypeCount() >= limits.eventTypesMax) {
            throw problems.unprocessable(`There are ${this.#reader.eventTypeCount()} event types, the most this cluster holds (eventTypesMax ${limits.eventTypesMax}); delete unused ones first`);
        }
        const cmd = { op: 'event_type.create', eventType, partitionCount };
        // Placed over this node's applied state: a lagging view costs balance, never validity (the state
        // machine checks the placement again at apply, and allocates the group ids there).
        if (this.#members !== undefined) {
            cmd.placement = proposePlacement(this.#reader.eventTypes(), this.#members, partitionCount);
            if (cmd.placement === undefined)
                throw problems.unavailable('The cluster members are not known on this node yet; retry');
        }
        failIfRejected(await this.#proposer.propose(cmd));
        return eventType.name;
    }
    async update(name, body) {
        const existing = this.record(name);
        const { eventType, schemaChanged } = validateEventTypeUpdate(body, existing, this.#options, this.#now());
        const versionsMax = this.#reader.limits().schemaVersionsMax;
        if (schemaChanged && existing.schemas.length >= versionsMax) {
            throw problems.unprocessable(`Event type "${name}" has ${existing.schemas.length} schema versions, the most one event type keeps (schemaVersionsMax ${versionsMax}); its schema cannot change any more`);
        }
        failIfRejected(await this.#proposer.propose({
            op: 'event_type.update',
            eventType,
            basedOnUpdatedAt: existing.eventType.updated_at,
            schemaChanged,
        }));
    }
    /**
     * The feature toggle disable_event_type_deletion stops deletions by anyone but the administrator,
     * with 403 (the only refusal the interface lists for DELETE), as the original service did: an
     * operator who froze deletions can still remove a type.
     */
    async delete(name, byAdministrator) {
        if (!byAdministrator && this.#features.isEnabled('disable_event_type_deletion')) {
            throw problems.forbidden('Event type deletion is disabled by the feature toggle disable_event_type_deletion; only the administrator may delete');
        }
        this.record(name);
        failIfRejected(await this.#proposer.propose({ op: 'event_type.delete', name }));
    }
    schemas(name, limit, offset) {
        const all = this.record(name).schemas;
        const newestFirst = [...all].reverse();
        const items = newestFirst.slice(offset, offset + limit);
        const base = `/event-types/${encodeURIComponent(name)}/schemas`;
        const links = {};
        if (offset > 0)
            links.prev = { href: `${base}?offset=${Math.max(0, offset - limit)}&limit=${limit}` };
        if (offset + limit < all.length)
            links.next = { href: `${base}?offset=${offset + limit}&limit=${limit}` };
        return { items, _links: links };
    }
    schema(name, version) {
        const rec = this.record(name);
        if (version === 'latest')
            return rec.eventType.schema;
        const found = rec.schemas.find((s) => s.version === version);
        if (found === undefined)
            throw problems.notFound(`Version "${version}" of the schema of event type "${name}" does not exist.`);
        return found;
    }
}
//# sourceMappingURL=event-type-service.js.map