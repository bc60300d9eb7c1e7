export const calmLinks = { dropRate: 0, duplicateRate: 0, delayMsMin: 1, delayMsMax: 5, slowRate: 0 };
export class Network {
    faults = { ...calmLinks };
    /**
     * Extra delay (virtual ms) of everything a node sends: an overloaded or badly connected node whose
     * answers arrive late, e.g. its vote for an election the candidate has already given up.
     */
    slowSenders = new Map();
    /** Directed cuts "from>to". */
    #cut = new Set();
    #key(from, to) {
        return `${from}>${to}`;
    }
    canDeliver(from, to) {
        return !this.#cut.has(this.#key(from, to));
    }
    cutOneWay(from, to) {
        this.#cut.add(this.#key(from, to));
    }
    /** Splits `nodes` into groups that cannot talk to each other (both directions). */
    partition(groups) {
        for (let i = 0; i < groups.length; i++) {
            for (let j = 0; j < groups.length; j++) {
                if (i === j)
                    continue;
                for (const a of groups[i])
                    for (const b of groups[j])
                        this.cutOneWay(a, b);
            }
        }
    }
    /** Two sides that cannot talk directly, and a bridge node that talks to both. */
    bridge(left, bridgeNode, right) {
        this.partition([left, right]);
        void bridgeNode; // the bridge keeps every link: nothing to cut
    }
    /** Cuts a node off from everyone else. */
    isolate(node, others) {
        for (const o of others) {
            if (o === node)
                continue;
            this.cutOneWay(node, o);
            this.cutOneWay(o, node);
        }
    }
    /** Restores every link of `node` (in both directions). */
    rejoin(node) {
        for (const k of [...this.#cut]) {
            const [a, b] = k.split('>');
            if (Number(a) === node || Number(b) === node)
                this.#cut.delete(k);
        }
    }
    heal() {
        this.#cut.clear();
        this.slowSenders.clear();
        this.faults = { ...calmLinks };
    }
    describeCuts() {
        return [...this.#cut].sort().join(' ');
    }
    /** The delivery delays for one message: [] when dropped, more than one when duplicated or replayed. */
    delays(rng, from) {
        const f = this.faults;
        if (f.dropRate > 0 && rng.chance(f.dropRate))
            return [];
        const lag = from === undefined ? 0 : (this.slowSenders.get(from) ?? 0);
        const one = () => {
            const base = rng.between(f.delayMsMin, f.delayMsMax) + (lag > 0 ? rng.between(lag / 2, lag) : 0);
            return f.slowRate > 0 && rng.chance(f.slowRate) ? base + rng.between(f.delayMsMax, 10 * f.delayMsMax) : base;
        };
        const out = [one()];
        if (f.duplicateRate > 0 && rng.chance(f.duplicateRate))
            out.push(one());
        const replay = f.replayRate ?? 0;
        if (replay > 0 && rng.chance(replay))
            out.push(rng.between(10 * f.delayMsMax, Math.max(10 * f.delayMsMax, f.replayMsMax ?? 1000)));
        return out;
    }
}
//# sourceMappingURL=network.js.map