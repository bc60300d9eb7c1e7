export class OpenStreams {
    #open = new Set();
    /** Registers a stream; the returned function unregisters it. */
    add(s) {
        this.#open.add(s);
        return () => this.#open.delete(s);
    }
    /** Closes every stream the predicate selects; returns how many. */
    closeWhere(select, reason) {
        let n = 0;
        for (const s of [...this.#open]) {
            if (!select(s))
                continue;
            this.#open.delete(s);
            s.close(reason);
            n++;
        }
        return n;
    }
    count(kind) {
        let n = 0;
        for (const s of this.#open)
            if (kind === undefined || s.kind === kind)
                n++;
        return n;
    }
}
//# sourceMappingURL=open-streams.js.map