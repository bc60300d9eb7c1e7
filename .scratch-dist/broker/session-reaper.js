export class SessionReaper {
    #d;
    /** Peer -> monotonic time it was first seen unreachable (in this run of checks). */
    #downSince = new Map();
    constructor(d) {
        this.#d = d;
    }
    /** One check; returns the nodes whose sessions were closed. */
    async check() {
        const d = this.#d;
        const now = d.monotonicMs();
        const closed = [];
        for (const peer of d.peers()) {
            if (d.reachable(peer)) {
                this.#downSince.delete(peer);
                continue;
            }
            const since = this.#downSince.get(peer) ?? now;
            this.#downSince.set(peer, since);
            if (now - since < d.afterMs || !d.isLeader() || !d.holdsSessions(peer))
                continue;
            // No process has the empty incarnation: every session of that node is closed.
            const r = await d.propose({ op: 'stream.close_stale', node: peer, incarnation: '', atMs: d.nowMs() });
            if (r.ok) {
                closed.push(peer);
                d.logger.warn({ node: peer, unreachableMs: Math.round(now - since) }, 'closed the subscription stream sessions of a node unreachable for longer than any commit timeout');
            }
        }
        return closed;
    }
}
//# sourceMappingURL=session-reaper.js.map