/**
 * The partition-level checks of the host simulation: what clients were told about each batch, and
 * what every replica holds, compared as events arrive.
 *
 * - AckedBatchLost: an acknowledged batch is at the offsets it was given on every replica that has
 *   applied that far, also after any crash (a restarted replica is read again from its first offset).
 * - Duplicate: an event (every event is unique) is stored at one offset only; a batch retried with the
 *   same request id is stored once, and every acknowledgement of it names the same offsets.
 * - Reordered: a batch acknowledged before another was sent has lower offsets.
 * - Dense: every replica's offsets run without a gap from its first, and never go back while it runs.
 * - Converge: all replicas hold the same bytes at the same offset.
 * - FailedBatchAppeared: a batch the client was told failed for certain (the disk refused it) never
 *   shows up anywhere.
 */
import { InvariantViolation } from './invariants.js';
export function batchOfEvent(payload) {
    return payload.slice(0, payload.indexOf('.'));
}
export class PartitionLedger {
    #books = [];
    #batches = new Map();
    constructor(partitions) {
        for (let p = 0; p < partitions; p++)
            this.#books.push({ ref: [], where: new Map(), expected: new Map(), ackedMax: -1 });
    }
    #book(p) {
        return this.#books[p];
    }
    /** A client is about to send a new batch. */
    newBatch(id, partition, size) {
        const payloads = Array.from({ length: size }, (_, k) => `${id}.${k}`);
        const b = { id, partition, payloads, floor: this.#book(partition).ackedMax, status: 'pending' };
        this.#batches.set(id, b);
        return b;
    }
    ackedMax(p) {
        return this.#book(p).ackedMax;
    }
    /** Offsets some replica has applied (the longest log seen). */
    appliedMax(p) {
        return this.#book(p).ref.length - 1;
    }
    /** The client was told the batch is stored at first..last. */
    acked(b, first, last) {
        if (last - first + 1 !== b.payloads.length) {
            throw new InvariantViolation('AckedBatchLost', `batch ${b.id} of ${b.payloads.length} events acknowledged at ${first}..${last}`);
        }
        if (b.first !== undefined && b.first !== first) {
            throw new InvariantViolation('Duplicate', `batch ${b.id} acknowledged at ${b.first} and again at ${first} (a retry was stored twice)`);
        }
        if (b.status === 'failed')
            throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was told failed and then acknowledged`);
        if (first <= b.floor) {
            throw new InvariantViolation('Reordered', `batch ${b.id} acknowledged at ${first}, not after offset ${b.floor} acknowledged before it was sent`);
        }
        const book = this.#book(b.partition);
        for (let k = 0; k < b.payloads.length; k++) {
            const o = first + k;
            const want = b.payloads[k];
            const have = book.ref[o];
            if (have !== undefined && have !== want) {
                throw new InvariantViolation('AckedBatchLost', `batch ${b.id} acknowledged at ${first}..${last}, but offset ${o} of partition ${b.partition} holds ${have}`);
            }
            const other = book.expected.get(o);
            if (other !== undefined && other !== want) {
                throw new InvariantViolation('AckedBatchLost', `batch ${b.id} acknowledged at ${first}..${last}, but ${other} was acknowledged at offset ${o} of partition ${b.partition}`);
            }
            book.expected.set(o, want);
        }
        b.status = 'acked';
        b.first = first;
        book.ackedMax = Math.max(book.ackedMax, last);
    }
    /** The client was told the batch failed for certain (nothing stored). */
    failed(b) {
        if (b.status === 'acked')
            throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was acknowledged and then told failed`);
        const book = this.#book(b.partition);
        for (const p of b.payloads) {
            const o = book.where.get(p);
            if (o !== undefined)
                throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was told failed but is stored at offset ${o} of partition ${b.partition}`);
        }
        b.status = 'failed';
    }
    /** The outcome is unknown (a timeout, a crash of the node the client talked to): either is fine. */
    unknown(b) {
        if (b.status === 'pending')
            b.status = 'unknown';
    }
    /** A replica (`who`) holds `payload` at `offset`, right after `previous` (-1: its first). */
    stored(who, p, previous, offset, payload) {
        if (offset !== previous + 1) {
            throw new InvariantViolation('Dense', `${who} partition ${p}: offset ${offset} follows ${previous}`);
        }
        const book = this.#book(p);
        const have = book.ref[offset];
        if (have === undefined) {
            if (offset !== book.ref.length)
                throw new InvariantViolation('Dense', `${who} partition ${p}: offset ${offset} while others hold ${book.ref.length - 1}`);
            const exp = book.expected.get(offset);
            if (exp !== undefined && exp !== payload)
                throw new InvariantViolation('AckedBatchLost', `${who} partition ${p} holds ${payload} at offset ${offset}, acknowledged there: ${exp}`);
            book.ref.push(payload);
        }
        else if (have !== payload) {
            const exp = book.expected.get(offset);
            const what = exp === undefined ? 'Converge' : 'AckedBatchLost';
            throw new InvariantViolation(what, `${who} partition ${p} holds ${payload} at offset ${offset}; ${exp === undefined ? 'another replica holds' : 'acknowledged there:'} ${have}`);
        }
        const at = book.where.get(payload);
        if (at === undefined)
            book.where.set(payload, offset);
        else if (at !== offset)
            throw new InvariantViolation('Duplicate', `${who} partition ${p}: event ${payload} stored at ${at} and at ${offset}`);
        const b = this.#batches.get(batchOfEvent(payload));
        if (b === undefined)
            throw new InvariantViolation('Converge', `${who} partition ${p}: offset ${offset} holds ${payload}, which no client sent`);
        if (b.status === 'failed')
            throw new InvariantViolation('FailedBatchAppeared', `${who} partition ${p}: batch ${b.id} was told failed but is stored at offset ${offset}`);
        if (b.partition !== p)
            throw new InvariantViolation('Converge', `${who}: batch ${b.id} of partition ${b.partition} stored in partition ${p}`);
        const k = Number(payload.slice(payload.indexOf('.') + 1));
        if (b.first !== undefined && b.first + k !== offset) {
            throw new InvariantViolation('AckedBatchLost', `${who} partition ${p}: event ${payload} at ${offset}, acknowledged at ${b.first + k}`);
        }
    }
    counts() {
        const c = { acked: 0, failed: 0, unknown: 0, pending: 0 };
        for (const b of this.#batches.values())
            c[b.status]++;
        return c;
    }
}
//# sourceMappingURL=partition-ledger.js.map