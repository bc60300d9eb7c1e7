import { metadataGroup, TransportError, } from './types.js';
export class GroupDispatcher {
    #groups = new Map();
    #logger;
    #intervalMs;
    #nowMs;
    #heard;
    #unknownTotal = 0;
    #unknownSinceLog = 0;
    #lastLogMs = -Infinity;
    constructor(opts) {
        this.#logger = opts.logger;
        this.#intervalMs = opts.unknownLogIntervalMs ?? 10_000;
        this.#nowMs = opts.nowMs ?? Date.now;
        this.#heard = opts.heard;
    }
    heard(peer) {
        this.#heard?.(peer);
    }
    register(group, handler) {
        if (this.#groups.has(group))
            throw new Error(`group ${group} is already registered`);
        this.#groups.set(group, handler);
    }
    unregister(group) {
        this.#groups.delete(group);
    }
    has(group) {
        return this.#groups.has(group);
    }
    /** Messages and requests dropped so far because their group is not hosted here. */
    droppedForUnknownGroups() {
        return this.#unknownTotal;
    }
    #unknown(group, from, what) {
        this.#unknownTotal++;
        this.#unknownSinceLog++;
        const now = this.#nowMs();
        if (now - this.#lastLogMs < this.#intervalMs)
            return;
        this.#logger.info({ group, from, what, dropped: this.#unknownSinceLog, droppedTotal: this.#unknownTotal }, 'dropped traffic for a group this node does not host');
        this.#lastLogMs = now;
        this.#unknownSinceLog = 0;
    }
    receive(group, m) {
        const h = this.#groups.get(group);
        if (h === undefined)
            this.#unknown(group, m.from, m.type);
        else
            h.receive(m);
    }
    unreachable(peer) {
        for (const h of this.#groups.values())
            h.unreachable(peer);
    }
    snapshotStatus(group, peer, delivered) {
        this.#groups.get(group)?.snapshotStatus(peer, delivered);
    }
    propose(p) {
        const h = this.#groups.get(metadataGroup);
        if (h?.propose === undefined)
            return Promise.resolve({ status: 'unavailable', detail: 'the metadata group is not running on this node' });
        return h.propose(p);
    }
    append(from, req) {
        const h = this.#groups.get(req.group);
        if (h?.append === undefined) {
            this.#unknown(req.group, from, 'append');
            return Promise.resolve({ status: 'unavailable', detail: `group ${req.group} is not hosted on this node` });
        }
        return h.append(from, req);
    }
    read(from, req, signal) {
        const h = this.#groups.get(req.group);
        if (h?.read === undefined) {
            this.#unknown(req.group, from, 'read');
            throw new TransportError('unavailable', `group ${req.group} is not hosted on this node`);
        }
        return h.read(from, req, signal);
    }
    bounds(from, req) {
        const h = this.#groups.get(req.group);
        if (h?.bounds === undefined) {
            this.#unknown(req.group, from, 'bounds');
            return Promise.reject(new TransportError('unavailable', `group ${req.group} is not hosted on this node`));
        }
        return h.bounds(from, req);
    }
    fetchLog(from, req, signal) {
        const h = this.#groups.get(req.group);
        if (h?.fetchLog === undefined) {
            this.#unknown(req.group, from, 'fetchLog');
            throw new TransportError('unavailable', `group ${req.group} is not hosted on this node`);
        }
        return h.fetchLog(from, req, signal);
    }
}
//# sourceMappingURL=dispatcher.js.map