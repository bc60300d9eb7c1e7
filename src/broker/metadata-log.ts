/**
 * The node's metadata log while the node is a cluster of one: commands are appended durably to the
 * ordered KV (prefix 0x01) and then applied to the pure state machine, strictly in index order. On
 * start the last snapshot is restored and the entries after it replayed, so the state survives
 * restarts. The replicated Raft group takes this role once it lands; both sit behind MetadataProposer.
 */
import { assert } from '../core/assert.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine, type ApplyResult, type MetadataSnapshot } from '../metadata/state-machine.js';
import type { OrderedKv } from '../log/index.js';

export interface MetadataProposer {
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
}

const entryPrefix = Buffer.from([0x01, 0x01]);
const snapshotKey = Buffer.from([0x01, 0x02]);
/** Entries kept before they are folded into a snapshot. */
const snapshotEveryEntries = 1000;

function entryKey(index: number): Buffer {
  const k = Buffer.alloc(10);
  entryPrefix.copy(k, 0);
  k.writeBigUInt64BE(BigInt(index), 2);
  return k;
}

interface StoredSnapshot {
  index: number;
  state: MetadataSnapshot;
}

export class LocalMetadataLog implements MetadataProposer {
  readonly #kv: OrderedKv;
  #sm: MetadataStateMachine;
  #snapshotIndex: number;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #onApplied: (cmd: MetadataCommand, result: ApplyResult) => void;

  private constructor(kv: OrderedKv, sm: MetadataStateMachine, snapshotIndex: number, onApplied: (cmd: MetadataCommand, result: ApplyResult) => void) {
    this.#kv = kv;
    this.#sm = sm;
    this.#snapshotIndex = snapshotIndex;
    this.#onApplied = onApplied;
  }

  static async open(kv: OrderedKv, onApplied: (cmd: MetadataCommand, result: ApplyResult) => void = () => {}): Promise<LocalMetadataLog> {
    const raw = await kv.get(snapshotKey);
    let sm = new MetadataStateMachine();
    let snapshotIndex = 0;
    if (raw !== null) {
      const snap = JSON.parse(raw.toString('utf8')) as StoredSnapshot;
      sm = MetadataStateMachine.restore(snap.state, snap.index);
      snapshotIndex = snap.index;
    }
    for await (const [key, value] of kv.iterate({ gt: entryKey(snapshotIndex), lt: entryKey(Number.MAX_SAFE_INTEGER) })) {
      const index = Number(key.readBigUInt64BE(2));
      sm.apply(index, JSON.parse(value.toString('utf8')) as MetadataCommand);
    }
    return new LocalMetadataLog(kv, sm, snapshotIndex, onApplied);
  }

  get state(): MetadataStateMachine {
    return this.#sm;
  }

  propose(cmd: MetadataCommand): Promise<ApplyResult> {
    const run = async (): Promise<ApplyResult> => {
      const index = this.#sm.appliedIndex + 1;
      const value = Buffer.from(JSON.stringify(cmd));
      await this.#kv.write((b) => b.put(entryKey(index), value), { durable: true });
      const result = this.#sm.apply(index, cmd);
      assert(this.#sm.appliedIndex === index, 'applied index follows the log');
      this.#onApplied(cmd, result);
      if (index - this.#snapshotIndex >= snapshotEveryEntries) await this.#snapshot();
      return result;
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => undefined);
    return p;
  }

  async #snapshot(): Promise<void> {
    const index = this.#sm.appliedIndex;
    const snap: StoredSnapshot = { index, state: this.#sm.snapshot() };
    const value = Buffer.from(JSON.stringify(snap));
    await this.#kv.write((b) => {
      b.put(snapshotKey, value);
      b.delRange(entryKey(0), entryKey(index + 1));
    }, { durable: true });
    this.#snapshotIndex = index;
  }

  /** Waits for proposals in flight (shutdown). */
  async idle(): Promise<void> {
    await this.#queue;
  }
}
