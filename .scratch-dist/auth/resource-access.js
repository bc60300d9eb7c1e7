/**
 * Per-resource authorization of event types and the blacklist (interface.md, "Authentication" 4 and 5;
 * compatibility.md, wildcard). PURE: decisions from the principal, the event type and the replicated
 * blacklist; a refusal is a 403 Problem naming what is missing.
 *
 * - A subject matches an attribute when data_type and value are equal; the wildcard {"*","*"} matches
 *   every authenticated subject. The administrator always passes. An event type without an
 *   authorization section is open to every caller that has the route's scope.
 * - Deprecated read_scopes / write_scopes: when non-empty, the caller needs one of them.
 * - Blacklist: PRODUCER_APP / CONSUMER_APP name the caller's uid, PRODUCER_ET / CONSUMER_ET the event
 *   type. It applies to the administrator too (it is an operational brake, not a permission).
 */
import { problems } from '../core/problem.js';
import { subjectOf } from './principal.js';
export const wildcard = { data_type: '*', value: '*' };
export function matches(subject, attrs) {
    return attrs.some((a) => (a.data_type === wildcard.data_type && a.value === wildcard.value) || (a.data_type === subject.data_type && a.value === subject.value));
}
export class ResourceAccess {
    #blacklist;
    constructor(blacklist) {
        this.#blacklist = blacklist;
    }
    /** Whether the principal may read events of the event type (stream, partitions, cursor tools, subscriptions). */
    canRead(p, et) {
        if (p.admin)
            return true;
        if (et.authorization !== undefined && !matches(subjectOf(p), et.authorization.readers))
            return false;
        return scopesAllow(p, et.read_scopes);
    }
    checkRead(p, et) {
        if (!this.canRead(p, et))
            throw problems.forbidden(`Access to read events of event type "${et.name}" is denied for ${describe(p)}`);
    }
    checkWrite(p, et) {
        if (this.#blacklist.blacklisted('PRODUCER_ET', et.name))
            throw problems.forbidden(`Publishing to event type "${et.name}" is blocked (blacklist PRODUCER_ET)`);
        if (this.#blacklist.blacklisted('PRODUCER_APP', p.uid))
            throw problems.forbidden(`Application "${p.uid}" is blocked from publishing (blacklist PRODUCER_APP)`);
        if (p.admin)
            return;
        if (et.authorization !== undefined && !matches(subjectOf(p), et.authorization.writers)) {
            throw problems.forbidden(`Access to write events of event type "${et.name}" is denied for ${describe(p)}`);
        }
        if (!scopesAllow(p, et.write_scopes))
            throw problems.forbidden(`One of the write_scopes of event type "${et.name}" is required`);
    }
    /** Update and delete of an event type that has an authorization section. */
    checkAdmin(p, et) {
        if (p.admin || et.authorization === undefined)
            return;
        if (!matches(subjectOf(p), et.authorization.admins)) {
            throw problems.forbidden(`Administration of event type "${et.name}" is denied for ${describe(p)}`);
        }
    }
    /**
     * An operation on a subscription (interface.md has subscriptions "planned"; this follows the
     * original service's later versions). Every operation needs read access to each of the
     * subscription's event types: a caller who may not read an event type learns nothing of a
     * subscription on it (stats name stream ids, which commit). With an authorization section, `admin`
     * operations (update, cursor reset, delete) need a match in `admins`, `consume` (stream, commit) one
     * in `readers`, and `view` (get, cursors, stats) one in either. The administrator passes.
     */
    checkSubscription(p, sub, eventTypes, op) {
        if (p.admin)
            return;
        for (const et of eventTypes)
            this.checkRead(p, et);
        const auth = sub.authorization;
        if (auth === undefined)
            return;
        const subject = subjectOf(p);
        const allowed = op === 'admin' ? matches(subject, auth.admins) : op === 'consume' ? matches(subject, auth.readers) : matches(subject, auth.readers) || matches(subject, auth.admins);
        if (!allowed) {
            const what = op === 'admin' ? 'Administration of' : op === 'consume' ? 'Consuming from' : 'Access to';
            throw problems.forbidden(`${what} subscription "${sub.id}" is denied for ${describe(p)} (its authorization section)`);
        }
    }
    /** Consuming (streams): read access plus the consumer blacklist. */
    checkConsume(p, et) {
        this.checkRead(p, et);
        if (this.#blacklist.blacklisted('CONSUMER_ET', et.name))
            throw problems.forbidden(`Consuming event type "${et.name}" is blocked (blacklist CONSUMER_ET)`);
        if (this.#blacklist.blacklisted('CONSUMER_APP', p.uid))
            throw problems.forbidden(`Application "${p.uid}" is blocked from consuming (blacklist CONSUMER_APP)`);
    }
}
function scopesAllow(p, scopes) {
    return scopes === undefined || scopes.length === 0 || scopes.some((s) => p.scopes.has(s));
}
function describe(p) {
    return `${p.type} "${p.uid}"`;
}
//# sourceMappingURL=resource-access.js.map