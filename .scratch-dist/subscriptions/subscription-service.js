/**
 * Subscriptions as replicated metadata (interface.md, "Subscription" and the Subscriptions endpoints):
 * checks a POST /subscriptions body, decides the id and created_at, and proposes subscription.create;
 * the key triple is made unique by the state machine at apply time, so two racing creates of the same
 * triple on different nodes get the same subscription. Reads come from the applied metadata state.
 *
 * Status codes (docs/decisions.md): a body that is not a JSON object is 400 (the interface's "bad
 * request on subscription create"); a JSON object with a field that breaks a rule (type, missing,
 * empty, unknown event type, partition limit, initial cursors) is 422 ("invalid subscription body").
 */
import { problems } from '../core/problem.js';
import { readFromValues, subscriptionKey, } from '../metadata/types.js';
function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}
/** null counts as absent for optional fields (as for event types, docs/decisions.md). */
function optional(body, field) {
    const v = body[field];
    return v === null ? undefined : v;
}
function nonEmptyString(body, field, required) {
    const v = optional(body, field);
    if (v === undefined) {
        if (required)
            throw problems.unprocessable(`Field "${field}" is required`);
        return undefined;
    }
    if (typeof v !== 'string' || v.length === 0)
        throw problems.unprocessable(`Field "${field}" must be a non-empty string`);
    return v;
}
/**
 * A subscription's authorization section: `admins` and `readers`, each a non-empty list of
 * {data_type, value} with non-empty strings (as for event types; any data_type is accepted).
 */
export function parseSubscriptionAuthorization(value) {
    if (value === undefined || value === null)
        return undefined;
    if (!isObject(value))
        throw problems.unprocessable('Field "authorization" must be an object with admins and readers');
    const extra = Object.keys(value).filter((k) => k !== 'admins' && k !== 'readers');
    if (extra.length > 0)
        throw problems.unprocessable(`Field "authorization.${extra[0]}" is not known: a subscription's authorization has admins and readers`);
    const list = (name) => {
        const items = value[name];
        if (items === undefined || items === null)
            throw problems.unprocessable(`Field "authorization.${name}" is required`);
        if (!Array.isArray(items) || items.length === 0)
            throw problems.unprocessable(`Field "authorization.${name}" must be a non-empty array`);
        return items.map((item, i) => {
            const field = `authorization.${name}[${i}]`;
            if (!isObject(item))
                throw problems.unprocessable(`Field "${field}" must be an object with data_type and value`);
            const { data_type: dataType, value: v } = item;
            if (typeof dataType !== 'string' || dataType === '')
                throw problems.unprocessable(`Field "${field}.data_type" must be a non-empty string`);
            if (typeof v !== 'string' || v === '')
                throw problems.unprocessable(`Field "${field}.value" must be a non-empty string`);
            return { data_type: dataType, value: v };
        });
    };
    return { admins: list('admins'), readers: list('readers') };
}
export class SubscriptionService {
    #reader;
    #proposer;
    #clock;
    #newId;
    #checkCursor;
    #options;
    #features;
    constructor(deps) {
        this.#reader = deps.reader;
        this.#proposer = deps.proposer;
        this.#clock = deps.clock;
        this.#newId = deps.newId;
        this.#checkCursor = deps.checkCursor;
        this.#options = deps.options;
        this.#features = deps.features ?? { isEnabled: () => false };
    }
    /** POST /subscriptions: the stored subscription, and whether this request created it (201) or it existed (200). */
    async create(body) {
        if (this.#features.isEnabled('disable_subscription_creation')) {
            throw problems.unavailable('Subscription creation is disabled by the feature toggle disable_subscription_creation');
        }
        const candidate = this.#validate(body);
        const existing = this.#findByKey(candidate);
        if (existing !== undefined)
            return { subscription: existing, created: false };
        const max = this.#reader.subscriptionsMax();
        if (this.#reader.subscriptionCount() >= max) {
            throw problems.unprocessable(`There are ${this.#reader.subscriptionCount()} subscriptions, the most this cluster holds (subscriptionsMax ${max}); delete unused ones first`);
        }
        const r = await this.#proposer.propose({ op: 'subscription.create', subscription: candidate });
        if (!r.ok) {
            // not_found: an event type was deleted between the check above and the apply. limit: a bound of
            // the metadata (limits.ts), reached meanwhile or checked only where commands are applied.
            if (r.reason === 'not_found' || r.reason === 'limit' || r.reason === 'invalid')
                throw problems.unprocessable(r.detail);
            throw problems.conflict(r.detail);
        }
        if (r.subscription === undefined)
            throw problems.internal('subscription.create applied without a subscription in its result');
        return { subscription: r.subscription, created: r.created === true };
    }
    #findByKey(s) {
        const key = subscriptionKey(s);
        for (const existing of this.#reader.subscriptions())
            if (subscriptionKey(existing) === key)
                return existing;
        return undefined;
    }
    #validate(body) {
        if (!isObject(body))
            throw problems.badRequest('The body must be a JSON object (a Subscription)');
        const owning_application = nonEmptyString(body, 'owning_application', true);
        const consumer_group = nonEmptyString(body, 'consumer_group', false) ?? 'default';
        const rawTypes = optional(body, 'event_types');
        if (rawTypes === undefined)
            throw problems.unprocessable('Field "event_types" is required');
        if (!Array.isArray(rawTypes) || rawTypes.length === 0)
            throw problems.unprocessable('Field "event_types" must be a non-empty array of event type names');
        rawTypes.forEach((t, i) => {
            if (typeof t !== 'string' || t.length === 0)
                throw problems.unprocessable(`Field "event_types[${i}]" must be a non-empty string`);
        });
        const event_types = [...new Set(rawTypes)];
        const rawReadFrom = optional(body, 'read_from') ?? 'end';
        if (typeof rawReadFrom !== 'string' || !readFromValues.includes(rawReadFrom)) {
            throw problems.unprocessable(`Field "read_from" must be one of ${readFromValues.join(', ')}, got ${JSON.stringify(rawReadFrom)}`);
        }
        const read_from = rawReadFrom;
        const records = new Map();
        const missing = [];
        for (const name of event_types) {
            const rec = this.#reader.eventType(name);
            if (rec === undefined)
                missing.push(name);
            else
                records.set(name, rec);
        }
        if (missing.length > 0) {
            throw problems.unprocessable(`Event type(s) ${missing.map((n) => `"${n}"`).join(', ')} do not exist`);
        }
        const partitions = [...records.values()].reduce((sum, rec) => sum + rec.storage.partitions.length, 0);
        if (partitions > this.#options.partitionsMax) {
            throw problems.unprocessable(`The event types of a subscription may have at most ${this.#options.partitionsMax} partitions together; these have ${partitions}`);
        }
        const subscription = {
            id: this.#newId(),
            owning_application,
            event_types,
            consumer_group,
            read_from,
            created_at: new Date(this.#clock.nowMs()).toISOString(),
        };
        if (read_from === 'cursors')
            subscription.initial_cursors = this.#initialCursors(optional(body, 'initial_cursors'), records);
        const authorization = parseSubscriptionAuthorization(optional(body, 'authorization'));
        if (authorization !== undefined)
            subscription.authorization = authorization;
        return subscription;
    }
    /**
     * PUT /subscriptions/{id}: only the authorization section may change (as in the original service);
     * every other field sent must be what the subscription has. An existing section cannot be removed.
     */
    async update(id, body) {
        const current = this.get(id);
        if (!isObject(body))
            throw problems.badRequest('The body must be a JSON object (a Subscription)');
        const same = (field, sent, stored) => {
            if (sent !== undefined && JSON.stringify(sent) !== JSON.stringify(stored)) {
                throw problems.unprocessable(`Field "${field}" cannot be changed; only "authorization" can`);
            }
        };
        same('id', optional(body, 'id'), current.id);
        same('owning_application', optional(body, 'owning_application'), current.owning_application);
        same('consumer_group', optional(body, 'consumer_group'), current.consumer_group);
        same('read_from', optional(body, 'read_from'), current.read_from);
        same('initial_cursors', optional(body, 'initial_cursors'), current.initial_cursors);
        const types = optional(body, 'event_types');
        if (types !== undefined && (!Array.isArray(types) || subscriptionKey({ ...current, event_types: types }) !== subscriptionKey(current))) {
            throw problems.unprocessable('Field "event_types" cannot be changed; only "authorization" can');
        }
        const authorization = parseSubscriptionAuthorization(optional(body, 'authorization'));
        if (authorization === undefined) {
            if (current.authorization !== undefined)
                throw problems.unprocessable('Field "authorization" cannot be removed once set');
            return current;
        }
        const r = await this.#proposer.propose({ op: 'subscription.update', id, authorization });
        if (!r.ok) {
            if (r.reason === 'not_found')
                throw problems.subscriptionNotFound(`Subscription with id "${id}" does not exist`);
            throw problems.unprocessable(r.detail);
        }
        return r.subscription ?? { ...current, authorization };
    }
    /** initial_cursors for read_from=cursors: exactly one valid cursor per partition of every event type. */
    #initialCursors(raw, records) {
        if (raw === undefined)
            throw problems.unprocessable('Field "initial_cursors" is required when read_from is cursors');
        if (!Array.isArray(raw))
            throw problems.unprocessable('Field "initial_cursors" must be an array of cursors');
        const seen = new Set();
        const cursors = raw.map((c, i) => {
            const where = `initial_cursors[${i}]`;
            if (!isObject(c))
                throw problems.unprocessable(`Field "${where}" must be an object with event_type, partition and offset`);
            for (const f of ['event_type', 'partition', 'offset']) {
                if (typeof c[f] !== 'string')
                    throw problems.unprocessable(`Field "${where}.${f}" must be a string`);
            }
            const cursor = { event_type: c['event_type'], partition: c['partition'], offset: c['offset'] };
            const rec = records.get(cursor.event_type);
            if (rec === undefined) {
                throw problems.unprocessable(`${where} names event type "${cursor.event_type}", which is not one of the subscription's event types`);
            }
            if (!rec.storage.partitions.includes(cursor.partition)) {
                throw problems.unprocessable(`${where}: partition "${cursor.partition}" does not exist in event type "${cursor.event_type}"`);
            }
            const key = JSON.stringify([cursor.event_type, cursor.partition]);
            if (seen.has(key))
                throw problems.unprocessable(`${where}: partition "${cursor.partition}" of event type "${cursor.event_type}" is given twice`);
            seen.add(key);
            this.#checkCursor(rec, cursor.partition, cursor.offset);
            return cursor;
        });
        const uncovered = [];
        for (const [name, rec] of records) {
            for (const p of rec.storage.partitions)
                if (!seen.has(JSON.stringify([name, p])))
                    uncovered.push(`${name}:${p}`);
        }
        if (uncovered.length > 0) {
            throw problems.unprocessable(`initial_cursors must cover every partition of every event type; missing: ${uncovered.slice(0, 20).join(', ')}${uncovered.length > 20 ? ', ...' : ''}`);
        }
        return cursors;
    }
    get(id) {
        const s = this.#reader.subscription(id);
        if (s === undefined)
            throw problems.subscriptionNotFound(`Subscription with id "${id}" does not exist`);
        return s;
    }
    async delete(id) {
        this.get(id);
        const r = await this.#proposer.propose({ op: 'subscription.delete', id });
        if (!r.ok) {
            if (r.reason === 'not_found')
                throw problems.subscriptionNotFound(`Subscription with id "${id}" does not exist`);
            throw problems.conflict(r.detail);
        }
    }
    /** GET /subscriptions: filters, newest first, one page with links that keep the filters. */
    list(filter, limit, offset) {
        const matching = [...this.#reader.subscriptions()]
            .filter((s) => filter.owningApplication === undefined || s.owning_application === filter.owningApplication)
            .filter((s) => filter.eventTypes.every((t) => s.event_types.includes(t)))
            .reverse();
        const items = matching.slice(offset, offset + limit);
        const params = [
            ...filter.eventTypes.map((t) => `event_type=${encodeURIComponent(t)}`),
            ...(filter.owningApplication === undefined ? [] : [`owning_application=${encodeURIComponent(filter.owningApplication)}`]),
        ];
        const href = (o) => `/subscriptions?${[...params, `offset=${o}`, `limit=${limit}`].join('&')}`;
        const links = {};
        if (offset > 0)
            links.prev = { href: href(Math.max(0, offset - limit)) };
        if (offset + limit < matching.length)
            links.next = { href: href(offset + limit) };
        return { items, _links: links };
    }
}
//# sourceMappingURL=subscription-service.js.map