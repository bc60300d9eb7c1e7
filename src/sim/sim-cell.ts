/**
 * The simulated marker file of a node (NodeDisk's "last durable raft write", a DurableCell): it lives
 * outside the KV, so a disk that loses its write-ahead log's tail keeps it. A write takes an fsync's
 * time and is lost if the process dies first (the previous value stays, as with the two-slot file).
 */
import type { CellRead, DurableCell } from '../log/index.js';

export class SimCell implements DurableCell {
  #payload: Buffer | undefined;
  /** Schedules the end of a write; the simulator drops it if the node crashes meanwhile. */
  readonly #later: (fn: () => void) => void;

  constructor(later: (fn: () => void) => void) {
    this.#later = later;
  }

  /** For a new incarnation of the node (the file stays; the process that writes it is new). */
  reopen(later: (fn: () => void) => void): SimCell {
    const c = new SimCell(later);
    c.#payload = this.#payload;
    return c;
  }

  /** The raft write sequence number the marker holds (its first 8 bytes), or -1 when none. */
  get seq(): number {
    const p = this.#payload;
    return p === undefined || p.length < 8 ? -1 : p.readUInt32BE(0) * 0x1_0000_0000 + p.readUInt32BE(4);
  }

  async read(): Promise<CellRead> {
    return this.#payload === undefined ? { state: 'missing' } : { state: 'ok', payload: Buffer.from(this.#payload) };
  }

  write(payload: Buffer): Promise<void> {
    const copy = Buffer.from(payload);
    return new Promise((resolve) =>
      this.#later(() => {
        this.#payload = copy;
        resolve();
      }),
    );
  }

  async close(): Promise<void> {}
}
