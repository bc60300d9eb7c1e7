export class SimCell {
    #payload;
    /** Schedules the end of a write; the simulator drops it if the node crashes meanwhile. */
    #later;
    constructor(later) {
        this.#later = later;
    }
    /** For a new incarnation of the node (the file stays; the process that writes it is new). */
    reopen(later) {
        const c = new SimCell(later);
        c.#payload = this.#payload;
        return c;
    }
    /** The raft write sequence number the marker holds (its first 8 bytes), or -1 when none. */
    get seq() {
        const p = this.#payload;
        return p === undefined || p.length < 8 ? -1 : p.readUInt32BE(0) * 0x1_0000_0000 + p.readUInt32BE(4);
    }
    async read() {
        return this.#payload === undefined ? { state: 'missing' } : { state: 'ok', payload: Buffer.from(this.#payload) };
    }
    write(payload) {
        const copy = Buffer.from(payload);
        return new Promise((resolve) => this.#later(() => {
            this.#payload = copy;
            resolve();
        }));
    }
    async close() { }
}
//# sourceMappingURL=sim-cell.js.map