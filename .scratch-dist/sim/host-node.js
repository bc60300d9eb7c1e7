/**
 * One simulated server running the production code: a RaftNodeHost (one Ready loop, one write per
 * turn for every group), the metadata group on it (RaftMetadataGroup, group 0) and PartitionReplicas
 * (partitions as Raft groups) over a SimDisk, with a
 * clock, timers and a scheduler that are all events of the simulator's queue. A crash abandons the
 * whole object graph (as kill -9 abandons a process) and the next start builds a new one over what
 * the disk kept; events scheduled by an older incarnation are void.
 *
 * Each node's clock runs at its own rate (tick-rate skew): a fast node times out elections sooner, a
 * slow one later, as nodes with drifting timers would.
 */
import pino from 'pino';
import { RaftMetadataGroup } from '../broker/metadata-group.js';
import { NodeDisk } from '../broker/node-disk.js';
import { PartitionReplicas } from '../broker/partition-replicas.js';
import { RaftNodeHost } from '../broker/raft-host/node-host.js';
import { SimCell } from './sim-cell.js';
const silent = pino({ level: 'silent' });
const epochMs = 1_700_000_000_000;
export class SimHostNode {
    id;
    #env;
    #rng;
    disk;
    /** The marker file of NodeDisk: outside the KV, it survives a lost write-ahead-log tail. */
    #cell;
    nodeDisk;
    /** What the transport delivers to each group this incarnation hosts (the GroupDispatcher's map). */
    handlers = new Map();
    incarnation = 0;
    running = false;
    host;
    metadata;
    replicas;
    /** Virtual clock: node milliseconds per simulated millisecond. */
    #rate = 1;
    #monoBase = 0;
    #simBase = 0;
    clock;
    constructor(id, env, rng, disk) {
        this.id = id;
        this.#env = env;
        this.#rng = rng;
        this.disk = disk;
        this.clock = {
            monotonicMs: () => this.#monoBase + (this.#env.nowMs() - this.#simBase) * this.#rate,
            // Wall-clock time is whole milliseconds (Date.now()); monotonic time may be fractional.
            nowMs: () => Math.floor(epochMs + this.clock.monotonicMs()),
        };
    }
    get rate() {
        return this.#rate;
    }
    /** Changes how fast this node's clock (and so its timers) runs from now on. */
    setRate(rate) {
        this.#monoBase = this.clock.monotonicMs();
        this.#simBase = this.#env.nowMs();
        this.#rate = rate;
    }
    /** Virtual simulator milliseconds for `ms` of this node's time. */
    simMs(ms) {
        return ms / this.#rate;
    }
    /** Starts a process over the disk: its identity and marker, the host, the replicas, then every partition placed here. */
    async start() {
        this.incarnation++;
        this.running = true;
        this.handlers.clear();
        const env = this.#env;
        const inc = this.incarnation;
        // Everything this process schedules is void once it has crashed, also what its leftover code
        // schedules after the crash.
        const at = (delayMs, fn) => env.at(delayMs, this, inc, fn);
        const later = (fn) => at(env.syncMs(this.id), fn);
        this.#cell = this.#cell === undefined ? new SimCell(later) : this.#cell.reopen(later);
        const scheduler = {
            soon: (fn) => at(0, fn),
            sleep: (ms) => new Promise((resolve) => at(this.simMs(ms), resolve)),
        };
        const ticks = {
            every: (ms, fn) => {
                let stopped = false;
                const fire = () => {
                    if (stopped)
                        return;
                    fn();
                    at(this.simMs(ms), fire);
                };
                // Nodes do not tick in phase: the first tick comes at a random point of the interval.
                at(this.simMs(1 + this.#rng.int(ms)), fire);
                return () => {
                    stopped = true;
                };
            },
        };
        const nodeDisk = await NodeDisk.open({ kv: this.disk, cell: this.#cell, self: this.id, newId: () => this.#rng.uuid(), logger: silent });
        if (this.incarnation !== inc)
            return;
        this.nodeDisk = nodeDisk;
        const t = env.tuning;
        const host = new RaftNodeHost({
            self: this.id,
            kv: this.disk,
            tickMs: t.tickMs,
            clock: this.clock,
            ticks,
            scheduler,
            disk: nodeDisk,
            logger: silent,
            onFatal: (err) => env.fatal(this, inc, err),
        });
        const replicas = new PartitionReplicas({
            self: this.id,
            kv: this.disk,
            host,
            placement: env.placement,
            clock: this.clock,
            random: this.#rng,
            logger: silent,
            electionTicks: t.electionTicks,
            heartbeatTicks: t.heartbeatTicks,
            appendTimeoutMs: t.appendTimeoutMs,
            memoryEntries: t.memoryEntries,
            disk: nodeDisk,
            sleep: scheduler.sleep,
            groups: {
                register: (group, handler) => this.handlers.set(group, handler),
                unregister: (group) => this.handlers.delete(group),
            },
        });
        replicas.setForwarder(env.forwarder(this));
        this.host = host;
        this.replicas = replicas;
        host.start(env.transport(this));
        const metadata = await RaftMetadataGroup.open({
            self: this.id,
            incarnation: `n${this.id}.${inc}`,
            kv: this.disk,
            host,
            founders: env.founders,
            disk: nodeDisk,
            directory: env.founders.map((id) => ({ id })),
            tickMs: t.tickMs,
            electionTicks: t.electionTicks,
            heartbeatTicks: t.heartbeatTicks,
            snapshotEntries: t.metadataSnapshotEntries,
            proposalTimeoutMs: t.metadataTimeoutMs,
            clock: this.clock,
            random: this.#rng,
            logger: silent,
            sleep: scheduler.sleep,
            onFatal: (err) => env.fatal(this, inc, err),
        });
        if (this.incarnation !== inc)
            return;
        this.metadata = metadata;
        this.handlers.set(metadata.raftGroup.id, metadata.transportHandler());
        this.#observe(metadata.raftGroup);
        env.metadataOpened(this, metadata);
        metadata.start(env.metadataTransport(this));
        for (const { topic, partition } of env.partitionsOf(this.id)) {
            const r = await replicas.ensure(topic, partition);
            if (r === undefined || this.incarnation !== inc)
                return;
            this.#hook(r);
            env.opened(this, r);
        }
    }
    /** Observes a partition group, and wakes the reader when its replica applied something. */
    #hook(r) {
        const env = this.#env;
        this.#observe(r.group);
        const onApplied = r.group.onApplied;
        r.group.onApplied = () => {
            onApplied?.();
            env.woke(this, r);
        };
    }
    /** Observes what a group persists and applies. */
    #observe(g) {
        const env = this.#env;
        const store = g.store;
        const persisted = store.persisted.bind(store);
        store.persisted = (rd) => {
            env.persisted(this, g, rd);
            persisted(rd);
        };
        const applyEntry = g.applyEntry.bind(g);
        g.applyEntry = (e) => {
            applyEntry(e);
            env.applied(this, g, e);
        };
    }
    /** The raft write sequence number the marker file holds (-1: none yet). */
    get markedSeq() {
        return this.#cell?.seq ?? -1;
    }
    /** The process dies at once: nothing is closed or flushed, and the disk keeps what `disk` says. */
    crash(next) {
        this.running = false;
        this.incarnation++;
        this.host = undefined;
        this.metadata = undefined;
        this.replicas = undefined;
        this.nodeDisk = undefined;
        this.handlers.clear();
        this.disk = next;
    }
}
//# sourceMappingURL=host-node.js.map