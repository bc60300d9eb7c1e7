/**
 * The connection to one peer: one gRPC channel shared by the Raft and Forward clients, and the
 * long-lived client stream that carries Raft messages of every group.
 *
 * Sending never blocks and never waits: when HTTP/2 flow control pushes back (write() returns false)
 * batches wait in a queue bounded in batches and in bytes, and when the queue is full, or the stream
 * fails, batches are dropped and the peer is reported unreachable to every group (which then probe it
 * gently). Raft tolerates lost messages; a dropped snapshot is reported to its group as not delivered
 * so the leader retries it.
 */
import * as grpc from '@grpc/grpc-js';
export class Peer {
    id;
    address;
    raft;
    forward;
    #owner;
    #call;
    /** Batches written while the stream was not draining, in order. */
    #queue = [];
    #queuedBytes = 0;
    #draining = true;
    #refusals = 0;
    dropped = 0;
    /** When the last batch was written or queued (Date.now()), to skip pings right after real traffic. */
    lastSentMs = 0;
    constructor(owner, id, address, raft, forward) {
        this.#owner = owner;
        this.id = id;
        this.address = address;
        this.raft = raft;
        this.forward = forward;
    }
    /**
     * Whether the channel to the peer is connected. Asking also connects an idle channel (a follower
     * sends nothing to the other followers, so their channels would otherwise stay idle and look down).
     */
    reachable() {
        return this.raft.getChannel().getConnectivityState(true) === grpc.connectivityState.READY;
    }
    /**
     * Sends one batch: one write on the stream (or a place in the queue). Snapshots go only over a
     * connected channel: a stream not yet connected takes writes into a buffer and confirms them, which
     * would report a snapshot delivered to a peer that is down; they are reported not delivered instead,
     * and the leader retries them later.
     */
    send(b) {
        let snapshotGroups = b.snapshotGroups;
        if (snapshotGroups.length > 0 && !this.reachable()) {
            this.#drop([{ batch: {}, snapshotGroups, bytes: 0, count: snapshotGroups.length }], 'snapshot for a peer not connected');
            snapshotGroups = [];
            if (b.count(false) === 0)
                return;
        }
        this.lastSentMs = Date.now();
        const withSnapshots = snapshotGroups.length > 0;
        const q = { batch: b.toWire(this.#owner.self, this.#owner.incarnation, withSnapshots), snapshotGroups, bytes: b.bytes, count: b.count(withSnapshots) };
        if (this.#call === undefined)
            this.#open();
        if (!this.#draining) {
            if (this.#queue.length >= this.#owner.queueBatchesMax || this.#queuedBytes + q.bytes > this.#owner.queueBytesMax) {
                this.#drop([q], 'send queue full');
                return;
            }
            this.#queue.push(q);
            this.#queuedBytes += q.bytes;
            return;
        }
        this.#write(q);
    }
    #write(q) {
        const call = this.#call;
        const ok = call.write(q.batch, (err) => {
            for (const g of q.snapshotGroups)
                this.#owner.handler.snapshotStatus(g, this.id, !err);
        });
        if (!ok)
            this.#draining = false;
    }
    #open() {
        const call = this.raft.Stream((err, _summary) => {
            if (this.#call !== call)
                return;
            this.#call = undefined;
            this.#draining = true;
            const lost = this.#queue;
            this.#queue = [];
            this.#queuedBytes = 0;
            if (lost.length > 0)
                this.#drop(lost, 'stream closed');
            if (err) {
                if (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.PERMISSION_DENIED) {
                    // A misconfiguration (another secret, a certificate or member list that does not match) that
                    // only an operator can fix: say so, the first time and then every hundredth.
                    if (this.#refusals++ % 100 === 0)
                        this.#owner.logger.warn({ peer: this.id, code: err.code, detail: err.details, refusals: this.#refusals }, 'the peer refuses this node\'s calls');
                }
                else {
                    this.#owner.logger.debug({ peer: this.id, code: err.code, detail: err.details }, 'raft stream to peer failed');
                }
                this.#owner.handler.unreachable(this.id);
            }
        });
        call.on('drain', () => {
            if (this.#call !== call)
                return;
            this.#draining = true;
            while (this.#draining && this.#queue.length > 0) {
                const q = this.#queue.shift();
                this.#queuedBytes -= q.bytes;
                this.#write(q);
            }
        });
        call.on('error', () => {
            // Reported through the callback above; the listener keeps the stream from throwing.
        });
        this.#call = call;
        this.#draining = true;
    }
    #drop(lost, why) {
        let n = 0;
        for (const q of lost)
            n += q.count;
        this.dropped += n;
        this.#owner.logger.debug({ peer: this.id, messages: n, why }, 'raft messages dropped');
        this.#owner.handler.unreachable(this.id);
        for (const q of lost)
            for (const g of q.snapshotGroups)
                this.#owner.handler.snapshotStatus(g, this.id, false);
    }
    close() {
        this.#call?.end();
        this.#call = undefined;
        // The Forward client shares the Raft client's channel: closing that one closes both.
        this.raft.close();
    }
}
//# sourceMappingURL=peer.js.map