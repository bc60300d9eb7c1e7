/**
 * Three (or more) RawNodes over MemoryStorage whose messages a test delivers by hand between Readies:
 * what the Raft core sends, message by message, for tests of its sending rules (commit-broadcast,
 * heartbeat-skip). Test-only (src/testing).
 */
import { Prng } from '../sim/prng.js';
import { bootstrapState } from '../raft/confchange.js';
import type { RaftConfig } from '../raft/config.js';
import { RawNode, type Ready } from '../raft/rawnode.js';
import { MemoryStorage } from '../raft/storage.js';
import type { Message, NodeId } from '../raft/types.js';

/** Config fields a test may set beyond what every member of a hand group gets. */
export type HandGroupConfig = Partial<Omit<RaftConfig, 'id' | 'storage' | 'applied' | 'random'>>;

export class HandGroup {
  readonly nodes = new Map<NodeId, { raw: RawNode; storage: MemoryStorage }>();

  constructor(
    readonly ids: readonly NodeId[],
    seed: number,
    config: HandGroupConfig = {},
  ) {
    const rng = new Prng(seed);
    for (const id of ids) {
      const storage = new MemoryStorage();
      const { entries, hardState } = bootstrapState([...ids]);
      storage.append(entries);
      storage.setHardState(hardState);
      const raw = new RawNode({ id, storage, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: rng.fork(), preVote: true, checkQuorum: true, damaged: null, ...config });
      this.nodes.set(id, { raw, storage });
    }
  }

  raw(id: NodeId): RawNode {
    return this.nodes.get(id)!.raw;
  }

  /** One Ready of `id`, persisted and advanced; its messages. */
  ready(id: NodeId): Message[] {
    const n = this.nodes.get(id)!;
    if (!n.raw.hasReady()) return [];
    const rd: Ready = n.raw.ready();
    if (rd.snapshot) n.storage.applySnapshot(rd.snapshot);
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    for (const e of rd.committedEntries) if (e.type === 'confChange') n.raw.applyConfChange(e);
    n.raw.advance(rd);
    return [...rd.messages];
  }

  /** Runs every Ready and delivers every message (but those `drop` refuses) until nothing moves. */
  settle(drop: (m: Message) => boolean = () => false): void {
    for (let round = 0; round < 1000; round++) {
      const inFlight: Message[] = [];
      for (const id of this.ids) while (this.raw(id).hasReady()) inFlight.push(...this.ready(id));
      if (inFlight.length === 0) return;
      for (const m of inFlight) if (!drop(m)) this.raw(m.to).step(m);
    }
    throw new Error('the group does not settle');
  }

  /** Node `id` campaigns and wins (the group settled before and after). */
  elect(id: NodeId): this {
    this.settle();
    this.raw(id).campaign();
    this.settle();
    if (!this.raw(id).isLeader()) throw new Error(`node ${id} did not win its election`);
    return this;
  }
}
