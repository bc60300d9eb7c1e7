/**
 * The faults of the host simulation, one drawn every 50 to 400 virtual ms during chaos:
 *
 * - network: partitions (symmetric, one-way, bridge, the leader of a group isolated), lossy,
 *   duplicating, slow and reordering links, stale copies of messages arriving much later;
 * - processes: a crash of one node, of a group's leader, of every node at once, and of a leader while
 *   its own fsync is in flight (after it sent the appends of that write: thesis §10.2.1, the case only
 *   a simulation reaches), restarted from what the disk kept: nothing unsynced, or a prefix of it;
 * - disks: slow fsyncs, fsync latency spikes on every disk (most fsyncs fast, some very slow: a
 *   leader's own write ends after its followers have acknowledged, a vote is answered late), a full
 *   disk for a while (writes refused; the host must fail the proposals and go on), a failed fsync
 *   (the node must stop; it is restarted later), and when enabled a disk that loses fsynced writes (a
 *   minority at a time), a wiped data directory, and a disk that lost the metadata group's records
 *   only (the node keeps its member id: lostMetadata);
 * - time: a node's clock running fast or slow (tick-rate skew), election storms (a group's leader is
 *   cut off for a moment and every member campaigns at once, one with a racing clock, another
 *   answering late), leadership transfers;
 * - operations: an operator moves a replica of a partition to a node outside its group, or cancels a
 *   move (host-moves.ts); the nodes carry the moves out meanwhile, under all of the above.
 */
import { nodeOfMember } from '../core/member-id.js';
import { writeSeqKey } from '../broker/raft-keys.js';
import { decodeU64Record } from '../broker/raft-records.js';
import type { HostSimContext, SimPartition } from './host-context.js';
import type { SimHostNode } from './host-node.js';
import type { Prng } from './prng.js';
import type { CrashKind } from './sim-disk.js';

export const calmSyncMsMax = 3;

const actions = [
  'partition',
  'partition',
  'oneWay',
  'bridge',
  'isolateLeader',
  'crash',
  'crash',
  'crashLeader',
  'crashMidWrite',
  'crashMidWrite',
  'crashAll',
  'flaky',
  'flaky',
  'slowDisk',
  'slowDisk',
  'slowSender',
  'fullDisk',
  'failSync',
  'skew',
  'skew',
  'storm',
  'transfer',
  'transfer',
  'lostTail',
  'wipe',
  'lostMetadata',
  'wipeBesideDeposed',
  'wipeBesideDeposed',
  'lostMetadataBesideNew',
  'move',
  'move',
  'move',
  'move',
  'move',
  'heal',
  'heal',
] as const;

export class Nemesis {
  readonly #ctx: HostSimContext;
  /** Per node: the longest an fsync takes now. */
  readonly syncMsMax = new Map<number, number>();
  /** Every disk: the share of fsyncs that take a latency spike, and how long one takes at most. */
  #spikeRate = 0;
  #spikeMsMax = 0;
  /**
   * The deposed leader of a wipeBesideDeposed under way: the other faults do not crash it (they would
   * often, as it still counts as leading a group) and no second such scenario begins meanwhile.
   */
  readonly #spared = new Set<number>();
  /**
   * A lostMetadataBesideNew that wiped a node first and whose round of chaos ended before the wiped
   * node's replacements did (they take seconds): the next round looks for its moment again.
   */
  #lossOwed = false;

  constructor(ctx: HostSimContext) {
    this.#ctx = ctx;
  }

  /** The crash kind of an ordinary crash: most lose every unsynced write, some keep a prefix. */
  #crashKind(n: SimHostNode): CrashKind {
    const r = this.#ctx.rng;
    if (n.disk.unsyncedWrites > 0 && r.chance(0.3)) {
      this.#ctx.stats.prefixCrashes++;
      return { kind: 'keepPrefix', keep: r.int(n.disk.unsyncedWrites + 1) };
    }
    return { kind: 'unsynced' };
  }

  #crash(n: SimHostNode, restartMs: number): void {
    if (!n.running || this.#spared.has(n.id)) return;
    this.#ctx.crash(n, this.#crashKind(n), restartMs);
  }

  /** A node that leads some group now, preferring one with a durable write in flight. */
  #aLeader(): SimHostNode | undefined {
    const ctx = this.#ctx;
    const leaders = ctx.partitions.map((p) => ctx.leaderOf(p)).filter((n): n is SimHostNode => n !== undefined && !this.#spared.has(n.id));
    if (leaders.length === 0) return undefined;
    return leaders.find((n) => n.disk.busy) ?? ctx.rng.pick(leaders);
  }

  act(): void {
    const ctx = this.#ctx;
    const r = ctx.rng;
    const all = ctx.nodes();
    const ids = all.map((n) => n.id);
    const action = r.pick(actions);
    let detail = '';
    switch (action) {
      case 'partition': {
        const s = shuffle(r, ids);
        const cut = r.between(1, s.length - 1);
        ctx.net.partition([s.slice(0, cut), s.slice(cut)]);
        break;
      }
      case 'oneWay':
        for (let k = r.between(1, 3); k > 0; k--) {
          const a = r.pick(ids);
          const b = r.pick(ids);
          if (a !== b) ctx.net.cutOneWay(a, b);
        }
        break;
      case 'bridge': {
        const s = shuffle(r, ids);
        const mid = Math.floor((s.length - 1) / 2);
        ctx.net.bridge(s.slice(1, 1 + mid), s[0]!, s.slice(1 + mid));
        break;
      }
      case 'isolateLeader': {
        const l = this.#aLeader();
        if (l !== undefined) ctx.net.isolate(l.id, ids);
        detail = `n${l?.id ?? '-'}`;
        break;
      }
      case 'crash':
        this.#crash(r.pick(all), r.between(10, 600));
        break;
      case 'crashLeader': {
        const l = this.#aLeader();
        if (l !== undefined) this.#crash(l, r.between(10, 600));
        break;
      }
      case 'crashMidWrite': {
        // A leader's next durable write: its appends go out first, then the process dies before
        // the write completes. Its followers may commit what it never stored.
        const l = this.#aLeader();
        if (l === undefined) break;
        detail = `n${l.id}`;
        const disk = l.disk;
        const restart = r.between(10, 600);
        const kill = (): void => {
          disk.onDurableWrite = undefined;
          // After the host has sent what it sends before its own write (same turn), before the write ends.
          ctx.at(0, () => {
            if (l.disk !== disk || !l.running || this.#spared.has(l.id)) return;
            ctx.stats.midWriteCrashes++;
            ctx.crash(l, { kind: 'unsynced' }, restart);
          }, l);
        };
        if (disk.busy) kill();
        else disk.onDurableWrite = kill;
        break;
      }
      case 'crashAll': {
        const after = r.between(10, 300);
        for (const n of all) this.#crash(n, after + r.between(0, 50));
        break;
      }
      case 'flaky':
        ctx.net.faults = {
          dropRate: r.pick([0, 0.05, 0.2, 0.4]),
          duplicateRate: r.pick([0, 0.05, 0.2]),
          delayMsMin: 1,
          delayMsMax: r.pick([3, 10, 40]),
          slowRate: r.pick([0, 0.05, 0.2]),
          replayRate: r.pick([0, 0, 0.05, 0.2]),
          replayMsMax: r.pick([300, 1500]),
        };
        break;
      case 'slowSender': {
        const n = r.pick(all);
        ctx.net.slowSenders.set(n.id, r.pick([100, 300, 600]));
        detail = `n${n.id} +${ctx.net.slowSenders.get(n.id)} ms`;
        break;
      }
      case 'slowDisk': {
        const n = r.pick(all);
        this.syncMsMax.set(n.id, r.pick([calmSyncMsMax, 10, 30, 80]));
        detail = `n${n.id} ${this.syncMsMax.get(n.id)} ms`;
        break;
      }
      case 'fullDisk': {
        const n = r.pick(all);
        n.disk.fullUntilMs = ctx.nowMs() + r.between(20, 400);
        ctx.stats.fullDisks++;
        detail = `n${n.id} until ${n.disk.fullUntilMs}`;
        break;
      }
      case 'failSync': {
        const n = r.pick(all);
        n.disk.failNextSync = true;
        detail = `n${n.id}`;
        break;
      }
      case 'skew': {
        const n = r.pick(all);
        n.setRate(r.pick([0.5, 0.8, 1.25, 2, 3]));
        ctx.stats.skews++;
        detail = `n${n.id} x${n.rate}`;
        break;
      }
      case 'storm': {
        // The metadata group: every member campaigns at once; one of them keeps a racing clock for a while.
        if (r.chance(1 / (ctx.partitions.length + 1))) {
          ctx.stats.storms++;
          for (const n of all) {
            const g = n.metadata?.raftGroup;
            if (g === undefined || n.host === undefined || g.isLeader()) continue;
            g.raw.campaign();
            n.host.kick(g.id);
          }
          const racer = r.pick(all);
          racer.setRate(r.pick([4, 6]));
          detail = `metadata, n${racer.id} x${racer.rate}`;
          break;
        }
        // The group's leader is cut off for a moment (a live leader's followers would ignore the
        // campaigns), every member campaigns at once, one keeps a racing clock and another answers
        // late for a while: split votes, and answers of one campaign reaching a later one.
        const p = r.pick(ctx.partitions);
        ctx.stats.storms++;
        const l = ctx.leaderOf(p);
        if (l !== undefined) {
          ctx.net.isolate(l.id, ids);
          ctx.at(r.between(50, 300), () => {
            if (ctx.chaos) ctx.net.rejoin(l.id);
          });
        }
        for (const id of p.replicas) {
          const g = ctx.node(id).replicas?.replica(p.topic, p.partition)?.group;
          const host = ctx.node(id).host;
          if (g === undefined || host === undefined || g.isLeader()) continue;
          g.raw.campaign();
          host.kick(g.id);
        }
        const racer = ctx.node(r.pick(p.replicas));
        racer.setRate(r.pick([4, 6]));
        const late = r.pick(p.replicas.filter((id) => id !== racer.id));
        ctx.net.slowSenders.set(late, r.pick([100, 300]));
        detail = `p${p.index}, leader n${l?.id ?? '-'} cut off, n${racer.id} x${racer.rate}, n${late} +${ctx.net.slowSenders.get(late)} ms`;
        break;
      }
      case 'transfer': {
        if (r.chance(1 / (ctx.partitions.length + 1))) {
          const l = ctx.running().find((n) => n.metadata?.isLeader() === true);
          const md = l?.metadata;
          if (l === undefined || md === undefined) break;
          const to = r.pick(md.raftGroup.raw.status().confState.voters);
          if (to !== md.raftGroup.self && md.transferLeadership(to)) {
            ctx.stats.transfers++;
            detail = `metadata n${l.id} -> n${to}`;
          }
          break;
        }
        const p = r.pick(ctx.partitions);
        const l = ctx.leaderOf(p);
        const g = l?.replicas?.replica(p.topic, p.partition)?.group;
        if (l === undefined || g === undefined) break;
        const to = r.pick(g.raw.status().confState.voters);
        if (to !== g.self && g.raw.transferLeadership(to)) {
          ctx.stats.transfers++;
          l.host?.kick(g.id);
          detail = `p${p.index} n${l.id} -> n${to}`;
        }
        break;
      }
      case 'lostTail': {
        if (!ctx.lostTail) break;
        this.#loseTail(r.pick(ctx.partitions));
        break;
      }
      case 'wipe': {
        if (!ctx.lostTail) break;
        detail = this.#wipe() ?? detail;
        break;
      }
      case 'lostMetadata': {
        // The disk loses the metadata group's records only (a lost write-ahead log tail that held
        // them alone; a directory restored without them), its marker file with them: the node must
        // keep its member id, under which its partition records were written (partition-state-held.ts).
        // Like a wipe, one damaged node at a time. Also once nodes run new members (their directories
        // were wiped), this one included: the node's metadata member, empty and damaged, learns a term
        // floor from the cluster's nodes under their node ids (metadata-group.ts, termProbePeers),
        // and a node running a new member answers for its former one (docs/metadata-raft.md).
        if (!ctx.lostTail) break;
        const n = r.pick(all);
        if (!n.running || ctx.damaged.size > 0) break;
        if (all.some((o) => o.member !== o.id)) ctx.stats.metadataLossesBesideNew++;
        ctx.loseMetadata(n, r.between(10, 300));
        detail = `n${n.id}`;
        break;
      }
      case 'wipeBesideDeposed': {
        if (!ctx.lostTail) break;
        detail = this.#wipeBesideDeposed() ?? detail;
        break;
      }
      case 'lostMetadataBesideNew': {
        if (!ctx.lostTail) break;
        detail = this.#lostMetadataBesideNew() ?? detail;
        break;
      }
      case 'move':
        // The operator: a replica moved to a node outside its group, or a move cancelled (host-moves.ts).
        detail = ctx.moveReplica();
        break;
      case 'heal':
        ctx.net.heal();
        break;
    }
    ctx.log(`NEMESIS ${action}${detail ? ` ${detail}` : ''}: cuts [${ctx.net.describeCuts()}] links ${JSON.stringify(ctx.net.faults)}`);
  }

  /**
   * A member of a group restarts without its last fsynced writes. Only losses its marker file can
   * tell (the raft writes left end below the sequence number the marker holds): a tail lost within
   * the marker's lag (its pacing interval and a marker write) goes unnoticed by design
   * (docs/storage.md), and Raft cannot survive an unnoticed loss.
   */
  #loseTail(p: SimPartition): void {
    const ctx = this.#ctx;
    const n = ctx.node(ctx.rng.pick(p.replicas));
    if (!n.running) return;
    // A minority at a time: no group may have two members that lost data and are not repaired yet
    // (they vote for no one, so a group with a majority of them could never elect again). Every node
    // is a member of the metadata group, so one node at a time.
    if ([...ctx.damaged].some((id) => id !== n.id)) return;
    const marked = n.markedSeq;
    const options: number[] = [];
    for (let syncs = 1; syncs <= n.disk.syncsKept; syncs++) {
      const v = n.disk.durableAfterLosing(writeSeqKey, syncs);
      if ((v === undefined ? 0 : decodeU64Record('writeSeq', writeSeqKey, v)) < marked) options.push(syncs);
    }
    if (options.length === 0) return;
    ctx.stats.lostTailCrashes++;
    ctx.crash(n, { kind: 'lostTail', syncs: ctx.rng.pick(options) }, ctx.rng.between(10, 300));
  }

  /**
   * A node's data directory is wiped (its KV and its marker file): it restarts with nothing, a disk
   * that joined the cluster after every group was created, and rejoins every group as a new member
   * (core/member-id.ts) that replaces its former one (the metadata group's leader, and for partition
   * groups a move on the same node that the metadata leader proposes and each partition's leader
   * carries out). Like a lost tail, one node at a time: it counts as damaged until the replacements
   * are recorded (host-cluster.ts).
   */
  #wipe(): string | undefined {
    const ctx = this.#ctx;
    const n = ctx.rng.pick(ctx.nodes());
    if (!n.running || ctx.damaged.size > 0) return undefined;
    // Also the new member of a move whose promotion is recorded but which the group may not have made
    // a voter yet: the move goes on without it, and its replacement follows (replica-move-plan.ts;
    // before, such a move stayed stuck and this wipe was spared: seed 29 of 100).
    if (ctx.promotedOn(n.id)) ctx.stats.wipesOfPromoted++;
    ctx.stats.wipes++;
    ctx.crash(n, { kind: 'wiped' }, ctx.rng.between(10, 300));
    return `n${n.id}`;
  }

  /**
   * The case a wiped member's term floor was for (docs/storage.md, "The term ceiling"): a group's leader
   * b is cut off with a clock so slow that it goes on leading its term for seconds; the others elect a
   * leader a of a newer term and commit with the third member w. Then w's directory is wiped and only
   * b can reach it (a is cut off), b's clock back at speed once w has opened its replica, so that it
   * heartbeats w at once: w must not take b's appends, or b commits its own entries over what a
   * committed with w's former self. Since w rejoins as a new member, what b sends goes to w's former
   * member, which w's host drops; w's new member is not in b's configuration, and opens only once a
   * (cut off meanwhile) adds it as a learner. (Before, w rejoined under its node id with its past
   * term unknown, and the term floor kept it from taking b's appends: TermFloor.) Each step waits for its moment, looking every 20 to 60 ms (a group leading three voters with
   * no node damaged, for up to a second; a newer leader that committed an entry of its term, for up
   * to 1.5 s), and the cuts it needs are made again at each look: the other faults, drawn meanwhile,
   * would otherwise heal them or cut b from w, and they do not crash b meanwhile (they would pick it
   * often, as it still counts as a leader). The first version waited fixed times and was completed in
   * about one seed of twenty.
   */
  #wipeBesideDeposed(): string | undefined {
    const ctx = this.#ctx;
    const r = ctx.rng;
    const ids = ctx.nodes().map((n) => n.id);
    const votersOf = (n: SimHostNode | undefined, p: SimPartition) => n?.replicas?.replica(p.topic, p.partition)?.group.raw.status().confState.voters ?? [];
    if (this.#spared.size > 0) return 'one under way';
    let looks = 0;
    const begin = (): void => {
      if (!ctx.chaos || this.#spared.size > 0) return;
      const ready = ctx.damaged.size > 0 ? [] : ctx.partitions.filter((p) => votersOf(ctx.leaderOf(p), p).length === 3);
      if (ready.length === 0) {
        if (++looks < 25) ctx.at(r.between(20, 60), begin);
        return;
      }
      const p = r.pick(ready);
      const b = ctx.leaderOf(p)!;
      const voters = votersOf(b, p);
      this.#spared.add(b.id);
      b.setRate(0.05);
      ctx.net.isolate(b.id, ids);
      ctx.log(`NEMESIS wipeBesideDeposed: p${p.index} n${b.id} (leader) cut off, x${b.rate}`);
      const until = ctx.nowMs() + 1500;
      const deposed = (): void => {
        const give = (why: string): void => {
          ctx.log(`NEMESIS wipeBesideDeposed: p${p.index} given up (${why})`);
          this.#spared.delete(b.id);
          if (b.rate !== 1) b.setRate(1);
        };
        if (!ctx.chaos) return;
        if (!b.running || ctx.damaged.size > 0) return give(b.running ? 'a node is damaged' : `n${b.id} crashed`);
        ctx.net.isolate(b.id, ids);
        const a = ctx.leaderOf(p);
        const st = a === b ? undefined : a?.replicas?.replica(p.topic, p.partition)?.group.raw;
        const status = st?.status();
        const w = voters.map((m) => ctx.node(nodeOfMember(m))).find((n) => n !== a && n !== b);
        if (a === undefined || st === undefined || status === undefined || st.termAt(status.commit) !== status.term || w === undefined || !w.running) {
          if (ctx.nowMs() < until) ctx.at(r.between(20, 60), deposed);
          else give('no newer leader committed with the third member');
          return;
        }
        ctx.stats.wipes++;
        ctx.stats.wipesBesideDeposed++;
        if (ctx.promotedOn(w.id)) ctx.stats.wipesOfPromoted++;
        ctx.net.rejoin(b.id);
        ctx.net.isolate(a.id, ids);
        ctx.log(`NEMESIS wipeBesideDeposed: p${p.index} n${w.id} wiped, n${b.id} (deposed, term ${b.replicas?.replica(p.topic, p.partition)?.group.term ?? '-'}) reaches it, n${a.id} (leader, term ${status.term}) cut off`);
        ctx.crash(w, { kind: 'wiped' }, r.between(10, 50));
        const end = ctx.nowMs() + r.between(400, 1000);
        const keep = (): void => {
          if (!ctx.chaos) return;
          if (ctx.nowMs() >= end) {
            ctx.net.rejoin(a.id);
            this.#spared.delete(b.id);
            if (b.rate !== 1) b.setRate(1);
            return;
          }
          ctx.net.isolate(a.id, ids);
          ctx.net.link(b.id, w.id);
          // Once w has opened its replica, b's clock back at speed: it heartbeats w within a few ticks.
          // Sooner, b's check that a majority still hears it could depose it before w is there.
          if (b.rate !== 1 && w.running && w.replicas?.replica(p.topic, p.partition) !== undefined) b.setRate(1);
          ctx.at(r.between(20, 60), keep);
        };
        keep();
      };
      ctx.at(r.between(20, 60), deposed);
    };
    begin();
    return looks === 0 ? undefined : 'waiting for a leader of three voters';
  }

  /**
   * A node loses its metadata group's records while another node runs a new metadata member (its
   * directory was wiped): the damaged member learns its term floor from the cluster's nodes under their
   * node ids, and the wiped node's new member answers for its former one (docs/metadata-raft.md). Drawn
   * plainly (lostMetadata), that order came in few seeds, and a new member's answer decided a probe
   * in fewer (mutant no-probe-answer-for-former: 1 of 40). On three and four nodes (one damaged node at
   * a time) a node is wiped first when none runs a new member, and the loss waits for its moment: no
   * node damaged (the replacements done, which take seconds), looking every 20 to 60 ms while the chaos lasts (10 s at most), and again in the next round if this one ends first. Five nodes take
   * two damaged metadata members at once (#twoDamaged).
   */
  #lostMetadataBesideNew(): string | undefined {
    const ctx = this.#ctx;
    if (ctx.nodes().length === 5) return this.#twoDamaged();
    let detail: string | undefined;
    if (!ctx.nodes().some((o) => o.member !== o.id)) {
      detail = this.#wipe();
      if (detail === undefined) return undefined;
      detail = `wiped ${detail} first`;
      this.#lossOwed = true;
    }
    this.#lookForLoss();
    return detail ?? 'waiting for a node running a new member';
  }

  /** See #lostMetadataBesideNew: the loss waits for no node to be damaged; owed to the next round if this one ends first. */
  #lookForLoss(): void {
    const ctx = this.#ctx;
    const r = ctx.rng;
    const until = ctx.nowMs() + 10000;
    const look = (): void => {
      if (!ctx.chaos) return;
      const news = ctx.nodes().filter((o) => o.running && o.member !== o.id);
      const ds = ctx.nodes().filter((o) => o.running && o.member === o.id && !this.#spared.has(o.id));
      if (news.length > 0 && ds.length > 0 && ctx.damaged.size === 0) {
        const d = r.pick(ds);
        ctx.stats.metadataLossesBesideNew++;
        ctx.log(`NEMESIS lostMetadataBesideNew: n${d.id} beside new member ${news.map((w) => `n${w.id}:${w.member}`).join(',')}`);
        ctx.loseMetadata(d, r.between(10, 300));
        this.#lossOwed = false;
        return;
      }
      if (ctx.nowMs() < until) ctx.at(r.between(20, 60), look);
    };
    look();
  }

  /**
   * Five nodes: W's directory is wiped and, while its new metadata member is not yet in the
   * configuration it applied, D (a node that shares no partition group of three with W) loses its
   * metadata records; D is then kept from two of the three
   * healthy nodes (cuts made again at each look, every 20 to 60 ms) until W's new member is in its
   * configuration or 2 s have passed, so that D's probe for its term floor (three answers of its four
   * peers) is still asking when W's new member may answer for its former one. It must not before it
   * is in the configuration (ProbeAnswerUnadded; mutant probe-answer-before-added). Two damaged
   * metadata members of five leave three that elect and commit; D's probe completes once the cuts go.
   */
  #twoDamaged(): string | undefined {
    const ctx = this.#ctx;
    const r = ctx.rng;
    if (ctx.damaged.size > 0 || this.#spared.size > 0) return undefined;
    // A metadata loss damages the node's partition groups too (its marker file goes with the records):
    // D shares no group of three with W, which would be left with one undamaged member of three.
    const holds = (n: SimHostNode, p: SimPartition): boolean => p.replicas.includes(n.id) || n.replicas?.replica(p.topic, p.partition) !== undefined;
    const apart = (a: SimHostNode, b: SimHostNode): boolean => ctx.partitions.every((p) => p.replicas.length >= 5 || !(holds(a, p) && holds(b, p)));
    const ws = ctx.nodes().filter((o) => o.running && ctx.nodes().some((d) => d !== o && apart(o, d)));
    if (ws.length === 0) return undefined;
    const w = r.pick(ws);
    if (ctx.promotedOn(w.id)) ctx.stats.wipesOfPromoted++;
    ctx.stats.wipes++;
    ctx.crash(w, { kind: 'wiped' }, r.between(10, 100));
    const unadded = (): boolean => {
      const md = w.running ? w.metadata?.raftGroup : undefined;
      return md !== undefined && md.self === w.member && !md.conf.voters.includes(md.self) && !md.conf.learners.includes(md.self);
    };
    let until = ctx.nowMs() + 1500;
    const look = (): void => {
      if (!ctx.chaos) return;
      const others = ctx.nodes().filter((o) => o.id !== w.id && o.running && o.member === o.id && !ctx.damaged.has(o.id) && !this.#spared.has(o.id));
      const ds = others.filter((o) => apart(o, w));
      if (!unadded() || others.length < 4 || ds.length === 0) {
        if (ctx.nowMs() < until) ctx.at(r.between(10, 30), look);
        return;
      }
      const d = r.pick(ds);
      const cutFrom = shuffle(r, others.filter((o) => o !== d).map((o) => o.id)).slice(0, 2);
      ctx.stats.metadataLossesBesideNew++;
      ctx.stats.metadataLossesBesideUnadded++;
      ctx.log(`NEMESIS lostMetadataBesideNew: n${d.id} while n${w.id}'s new member ${w.member} is not in its configuration; n${d.id} cut from ${cutFrom.map((id) => `n${id}`).join(',')}`);
      ctx.loseMetadata(d, r.between(10, 50));
      const cut = (on: boolean): void => {
        for (const id of cutFrom) {
          if (on) {
            ctx.net.cutOneWay(d.id, id);
            ctx.net.cutOneWay(id, d.id);
          } else {
            ctx.net.uncutOneWay(d.id, id);
            ctx.net.uncutOneWay(id, d.id);
          }
        }
      };
      until = ctx.nowMs() + 2000;
      const hold = (): void => {
        if (!ctx.chaos) return;
        if (ctx.nowMs() >= until || (w.running && !unadded() && w.metadata !== undefined)) return cut(false);
        cut(true);
        ctx.at(r.between(20, 60), hold);
      };
      hold();
    };
    ctx.at(r.between(10, 30), look);
    return `n${w.id} wiped, a metadata loss beside its new member to follow`;
  }

  /** The fsync time a node's disk takes for one write now. */
  syncMs(node: number): number {
    const r = this.#ctx.rng;
    if (this.#spikeRate > 0 && r.chance(this.#spikeRate)) {
      this.#ctx.stats.syncSpikes++;
      return r.between(10, this.#spikeMsMax);
    }
    return r.between(1, this.syncMsMax.get(node) ?? calmSyncMsMax);
  }

  /**
   * A round of chaos begins: how often fsyncs take a latency spike on every disk during it (from one
   * in fifty to one in five).
   */
  chaosBegins(): void {
    const r = this.#ctx.rng;
    this.#spikeRate = r.pick([0.02, 0.05, 0.1, 0.2]);
    this.#spikeMsMax = r.pick([60, 150]);
    this.#ctx.log(`NEMESIS fsync spikes: ${this.#spikeRate * 100} % up to ${this.#spikeMsMax} ms`);
    if (this.#lossOwed && this.#ctx.lostTail) this.#lookForLoss();
  }

  calm(): void {
    this.syncMsMax.clear();
    this.#spared.clear();
    this.#spikeRate = 0;
    for (const n of this.#ctx.nodes()) {
      n.disk.fullUntilMs = 0;
      n.disk.failNextSync = false;
      n.disk.onDurableWrite = undefined;
      if (n.rate !== 1) n.setRate(1);
    }
  }
}

export function shuffle<T>(r: Prng, items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
