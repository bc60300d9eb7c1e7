import { problems } from '../core/problem.js';
import { currentFlowId } from '../observability/flow-context.js';
import { noNode } from '../raft/index.js';
import { checkForwardedCommand, decodeImage, decodeResult, encodeCommand, encodeImage, encodeResult, imageProblem } from './metadata-codec.js';
import { MetadataCompaction } from './metadata-compaction.js';
import { MetadataReads } from './metadata-reads.js';
import { applyCommand, metadataGroupId, restoreMetadata } from './metadata-restore.js';
import { ProposalFailedError, RaftGroup } from './raft-host/raft-group.js';
export { metadataGroupId } from './metadata-restore.js';
/** How long a follower waits before asking again when the leader it knew is not leader any more. */
const leaderRetryMs = 50;
class NotLeader extends Error {
}
export class RaftMetadataGroup {
    #o;
    #host;
    #store;
    #group;
    #reads;
    #compaction;
    #sm;
    #transport;
    #started = false;
    #closed = false;
    /** Opens (or founds) the group from the KV and restores the state machine up to the stored commit. */
    static async open(o) {
        const r = await restoreMetadata({ self: o.self, kv: o.kv, disk: o.disk, founders: o.founders, known: o.directory.map((m) => m.id), logger: o.logger, onApplied: o.onApplied });
        return new RaftMetadataGroup(o, r.store, r.sm, r.conf, r.applied);
    }
    constructor(o, store, sm, conf, applied) {
        this.#o = o;
        this.#host = o.host;
        this.#store = store;
        this.#sm = sm;
        const group = new RaftGroup({
            id: metadataGroupId,
            self: o.self,
            store,
            conf,
            applied,
            electionTicks: o.electionTicks,
            heartbeatTicks: o.heartbeatTicks,
            random: o.random,
        });
        this.#group = group;
        group.setApplier({
            apply: (e) => this.#apply(e),
            applied: (index) => this.#confApplied(index),
            restore: (s) => this.#restore(s),
            // A snapshot from a peer is checked whole when it arrives, before the core takes it (the node
            // host drops a malformed one with a log line): once taken it is stored before it is restored.
            snapshotProblem: (s) => imageProblem(s.data),
        });
        this.#reads = new MetadataReads({
            raw: () => group.raw,
            applied: () => group.applied,
            kick: () => this.#host.kick(metadataGroupId),
            incarnation: o.incarnation,
            nowMs: () => this.#now(),
            roundTimeoutMs: o.electionTicks * o.tickMs,
            timeoutMs: o.proposalTimeoutMs,
        });
        this.#compaction = new MetadataCompaction({
            store,
            snapshotEntries: o.snapshotEntries,
            applied: () => group.applied,
            conf: () => group.conf,
            image: () => encodeImage(this.#sm),
            pause: () => this.#host.pause(metadataGroupId),
            resume: () => this.#host.resume(metadataGroupId),
            nowMs: () => this.#now(),
            logger: o.logger,
            raftId: o.self,
            onFatal: (err) => this.#fatal(err),
        });
        group.onChange = (now, before) => this.#changed(now, before);
        group.onReadyDone = (rd) => this.#readyDone(rd);
        group.onApplied = () => {
            this.#reads.applied();
            this.#compaction.maybe();
        };
        group.onTick = (now) => this.#reads.tick(now);
        // Reads waiting for a round or for entries need the group awake (its ticks retry and expire them).
        group.busy = () => this.#reads.busy();
    }
    /** Joins the node host (which ticks it from now on); a group of one campaigns at once. */
    start(transport) {
        if (this.#started)
            throw new Error('metadata group started twice');
        this.#started = true;
        this.#transport = transport;
        this.#host.add(this.#group);
        if (this.#group.isSingleton())
            this.#group.raw.campaign();
        this.#host.kick(metadataGroupId);
    }
    get state() {
        return this.#sm;
    }
    get self() {
        return this.#o.self;
    }
    /** The generic group under this one (for observation: the simulator checks its Raft properties). */
    get raftGroup() {
        return this.#group;
    }
    isLeader() {
        return this.#group.isLeader();
    }
    /** Whether this node is the only member (publishing and consumption are served only then, for now). */
    isSingleNode() {
        const conf = this.#group.conf;
        const ids = new Set([...conf.voters, ...conf.learners, ...this.#o.directory.map((m) => m.id)]);
        ids.add(this.#o.self);
        return ids.size === 1;
    }
    /**
     * Asks this node, if it is the leader, to hand leadership to the voter `to` (Raft thesis §3.10).
     * The core refuses proposals until the transfer completes or, after an election timeout, is given
     * up; propose() waits meanwhile. False when this node is not the leader or `to` is no voter.
     */
    transferLeadership(to) {
        if (this.#closed)
            return false;
        const started = this.#group.raw.transferLeadership(to);
        this.#host.kick(metadataGroupId);
        return started;
    }
    // -------------------------------------------------------------------------------------------
    // Writes
    async propose(cmd) {
        const data = encodeCommand(cmd);
        const deadlineMs = this.#now() + this.#o.proposalTimeoutMs;
        const flowId = currentFlowId() ?? `raft-${this.#o.incarnation}`;
        for (;;) {
            if (this.#closed)
                throw problems.unavailable('The node is shutting down; retry on another node.');
            const remainingMs = deadlineMs - this.#now();
            // Below a millisecond is no time left: a timer waits at least that long (and a virtual clock
            // would not move for a fraction of a microsecond, looping here forever).
            if (remainingMs < 1)
                throw problems.unavailable('No metadata leader could take the write in time; retry later.');
            if (this.#group.isLeader()) {
                try {
                    return (await this.#proposeLocal(data, deadlineMs)).result;
                }
                catch (err) {
                    if (!(err instanceof NotLeader))
                        throw err;
                    // Refused although this node leads: a leadership transfer is pending. Retrying at once
                    // would loop on microtasks only (awaiting a rejected promise never yields to timers or
                    // I/O), so neither the ticks that give the transfer up nor the turn that sends it, nor
                    // any HTTP request, would run until the deadline. Wait a little, then look again.
                    await this.#sleep(Math.min(leaderRetryMs, remainingMs));
                    continue;
                }
            }
            const lead = this.#group.leader;
            if (lead === noNode || lead === this.#o.self || this.#transport === undefined) {
                await this.#sleep(Math.min(leaderRetryMs, remainingMs));
                continue;
            }
            const answer = await this.#transport.forward(lead, { command: data, flowId, deadlineMs: remainingMs });
            switch (answer.status) {
                case 'applied': {
                    const result = decodeResult(answer.result);
                    if (result === undefined)
                        throw problems.unavailable(`The metadata leader (node ${lead}) sent a malformed answer.`);
                    await this.#reads.waitApplied(answer.index, deadlineMs);
                    return result;
                }
                case 'notLeader':
                    await this.#sleep(Math.min(leaderRetryMs, remainingMs));
                    continue;
                case 'unavailable':
                    throw problems.unavailable(`Metadata write not confirmed: ${answer.detail}. It may or may not have been applied; retry.`);
            }
        }
    }
    /** Proposes on this node (its leader); NotLeader when it does not lead or a transfer is pending. */
    async #proposeLocal(data, deadlineMs) {
        const refusal = this.#host.refusal;
        if (refusal !== undefined)
            throw problems.unavailable(`The metadata log cannot be written now (${refusal.message}); retry.`);
        try {
            const a = await this.#group.propose(data, deadlineMs);
            if (a.outcome === undefined)
                throw new Error(`metadata entry ${a.index} applied without a result`);
            return { result: a.outcome, index: a.index };
        }
        catch (err) {
            if (!(err instanceof ProposalFailedError))
                throw err;
            switch (err.reason) {
                case 'notLeader':
                    throw new NotLeader();
                case 'overwritten':
                    throw problems.unavailable('The metadata leader lost its leadership before the write committed; retry.');
                case 'timeout':
                    throw problems.unavailable('The metadata write did not commit in time (no quorum?). It may or may not be applied later; retry.');
                case 'refused':
                    throw problems.unavailable(err.storageError === undefined ? `The metadata leader refused the write (${err.message}); retry.` : `The metadata log could not be written (${err.storageError.message}); retry.`);
                case 'closed':
                    throw problems.unavailable('The node is shutting down; retry on another node.');
            }
        }
    }
    /** A follower forwarded a proposal to us (the transport's Propose handler). */
    async #proposeForwarded(p) {
        if (!this.#group.isLeader())
            return { status: 'notLeader', leaderHint: this.#group.leader };
        const refused = checkForwardedCommand(p.command);
        if (refused !== undefined) {
            this.#o.logger.warn({ flowId: p.flowId, from: p.from, refused }, 'refused a malformed forwarded proposal');
            return { status: 'unavailable', detail: `refused: ${refused}` };
        }
        try {
            const { result, index } = await this.#proposeLocal(p.command, this.#now() + p.deadlineMs);
            this.#o.logger.info({ flowId: p.flowId, from: p.from, index, ok: result.ok }, 'metadata write forwarded by a follower applied');
            return { status: 'applied', index, result: encodeResult(result) };
        }
        catch (err) {
            if (err instanceof NotLeader)
                return { status: 'notLeader', leaderHint: this.#group.leader };
            return { status: 'unavailable', detail: err.message };
        }
    }
    // -------------------------------------------------------------------------------------------
    // Reads
    /**
     * Resolves once a read of `state` reflects every write acknowledged before the call; undefined when
     * that is already so (the leader of a group of one: every write it acknowledged was applied first).
     */
    readBarrier() {
        if (this.#closed)
            return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
        if (this.#group.isSingleton() && this.#group.isLeader())
            return undefined;
        return this.#reads.barrier();
    }
    // -------------------------------------------------------------------------------------------
    // The state machine (called by the node host's turn through the group)
    #apply(e) {
        if (e.data.byteLength === 0)
            return undefined; // a new leader's no-op
        return applyCommand(this.#sm, e, this.#o);
    }
    #confApplied(index) {
        const conf = this.#group.conf;
        this.#o.logger.info({ raftId: this.#o.self, index, voters: conf.voters, learners: conf.learners }, 'metadata configuration changed');
    }
    #restore(snap) {
        this.#sm = decodeImage(snap.data);
        this.#o.logger.info({ raftId: this.#o.self, index: snap.metadata.index, term: snap.metadata.term }, 'installed a metadata snapshot from the leader');
        this.#o.onRestored?.(this.#sm);
    }
    #changed(now, before) {
        const log = this.#o.logger;
        const raftId = this.#o.self;
        if (now.term !== before.term)
            log.info({ raftId, fromTerm: before.term, term: now.term }, 'metadata term changed');
        if (now.role !== before.role) {
            if (now.role === 'preCandidate' || now.role === 'candidate') {
                log.info({ raftId, term: now.term, role: now.role }, now.role === 'preCandidate' ? 'metadata pre-vote started' : 'metadata election started');
            }
            else if (now.role === 'leader') {
                log.info({ raftId, term: now.term }, 'became metadata leader');
            }
            else if (before.role === 'leader') {
                log.info({ raftId, term: now.term }, 'stepped down as metadata leader');
            }
        }
        if (now.lead !== before.lead) {
            log.info({ raftId, term: now.term, leader: now.lead === noNode ? null : now.lead, previousLeader: before.lead === noNode ? null : before.lead }, 'metadata leader changed');
            this.#o.onLeaderChange?.(now.lead === noNode ? null : now.lead, now.term);
            this.#reads.leaderChanged();
        }
    }
    #readyDone(rd) {
        if (rd.damaged !== undefined)
            this.#o.logger.error({ raftId: this.#o.self, leader: this.#group.leader, damagedIndex: rd.damaged.index }, 'metadata raft log damaged: the leader counts entries this node does not hold (entries it had acknowledged were lost); it will not vote or lead until repaired');
        if (rd.repaired)
            this.#o.logger.warn({ raftId: this.#o.self, term: this.#group.term, leader: this.#group.leader }, 'metadata raft member repaired from the leader: it votes and may lead again');
        if (rd.readStates.length > 0)
            this.#reads.answered(rd.readStates);
    }
    // -------------------------------------------------------------------------------------------
    // What arrives from the transport
    /** The transport's view of this group (its `propose` is the forwarded one, not propose() above). */
    transportHandler() {
        return {
            receive: (m) => {
                if (!this.#closed)
                    this.#host.receive(metadataGroupId, m);
            },
            propose: (p) => this.#proposeForwarded(p),
            unreachable: (id) => {
                if (!this.#closed)
                    this.#group.raw.reportUnreachable(id);
            },
            snapshotStatus: (id, delivered) => {
                if (!this.#closed)
                    this.#host.snapshotStatus(metadataGroupId, id, delivered);
            },
        };
    }
    // -------------------------------------------------------------------------------------------
    // Observation and shutdown
    view() {
        const st = this.#group.raw.status();
        const conf = this.#group.conf;
        const ids = new Set([this.#o.self, ...conf.voters, ...conf.learners, ...this.#o.directory.map((m) => m.id)]);
        const members = [...ids].sort((a, b) => a - b).map((id) => {
            const dir = this.#o.directory.find((m) => m.id === id);
            const self = id === this.#o.self;
            return {
                id,
                self,
                suffrage: conf.voters.includes(id) ? 'voter' : conf.learners.includes(id) ? 'learner' : 'none',
                raft_address: dir?.raftAddress ?? null,
                http_address: dir?.httpAddress ?? null,
                reachable: self || (this.#transport?.reachable(id) ?? false),
            };
        });
        return {
            id: this.#o.self,
            incarnation: this.#o.incarnation,
            role: st.state,
            members,
            metadata: {
                leader: st.lead === noNode ? null : st.lead,
                term: st.term,
                commit_index: st.commit,
                applied_index: this.#group.applied,
                last_index: st.lastIndex,
                snapshot_index: this.#store.storage.snapshot().metadata.index,
                raft_damaged: st.damaged !== null,
                raft_damage: st.damaged === null ? null : (this.#store.damage?.reason ?? 'repair under way'),
            },
        };
    }
    #now() {
        return this.#o.clock.monotonicMs();
    }
    #sleep(ms) {
        return this.#o.sleep !== undefined ? this.#o.sleep(ms) : new Promise((resolve) => setTimeout(resolve, ms));
    }
    #fatal(err) {
        if (this.#closed)
            return;
        this.#o.logger.fatal({ err, raftId: this.#o.self }, 'metadata raft group failed');
        void this.close();
        this.#o.onFatal?.(err);
    }
    /** Leaves the node host: what waits fails with 503; a turn handling the group finishes first. */
    async close() {
        if (this.#closed)
            return;
        this.#closed = true;
        this.#compaction.close();
        this.#reads.close(problems.unavailable('The node is shutting down; retry on another node.'));
        await this.#host.remove(metadataGroupId);
    }
}
//# sourceMappingURL=metadata-group.js.map