/**
 * Opening the metadata group's member on this node from its durable Raft state (docs/metadata-raft.md,
 * "Persistence"): founds it when the node's storage is empty and it is a founder, or starts it empty
 * and damaged when it joins an existing cluster; refuses a damaged single-node cluster (unless the
 * operator accepts the loss: `acceptLoss`, BROOK_ACCEPT_METADATA_LOSS); restores the
 * state machine from the snapshot and replays the committed entries after it, before the node serves
 * anything.
 */
import type { Logger } from 'pino';
import type { OrderedKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine, type ApplyResult } from '../metadata/state-machine.js';
import type { ConfState, Entry, Index, NodeId } from '../raft/index.js';
import { applyConfChangeToState, decodeConfChange } from '../raft/index.js';
import { decodeCommand, decodeImage } from './metadata-codec.js';
import type { NodeDisk } from './node-disk.js';
import { RaftLogStore } from './raft-log-store.js';

/** The metadata group's id in the KV key space and on the node host (partition groups take others). */
export const metadataGroupId = 0;

export interface RestoreOptions {
  /** This node's member id as its directory records it (the node id unless it joined as a new member). */
  readonly self: NodeId;
  /**
   * Makes (durably) a new member id for a directory that holds no state for the group and does not
   * found it (node-disk.ts, newMetadataMember): it then starts empty as that new member, neither
   * damaged nor asking for a term floor, and waits for the leader to add it (metadata-members.ts).
   * Absent (tests, the simulator): such a member starts under `self`, empty and damaged, and learns a
   * term floor first (docs/metadata-raft.md, "A member whose past term is unknown").
   */
  readonly newMember?: (() => Promise<NodeId>) | undefined;
  /**
   * What partition raft state this directory holds (partition-state-held.ts), asked only before
   * `newMember` would be: a directory that holds some keeps its member id, since its partition
   * records were written under it, and starts the group empty and damaged instead.
   */
  readonly partitionState?: (() => Promise<string | undefined>) | undefined;
  readonly kv: OrderedKv;
  readonly disk?: NodeDisk | undefined;
  /** The founding voters (this node included), used only when storage is empty; none to join. */
  readonly founders: readonly NodeId[];
  /** Every member this node knows of (for the damaged single-node check). */
  readonly known: readonly NodeId[];
  readonly logger: Logger;
  /** Called for every command replayed, in order. */
  readonly onApplied?: ((cmd: MetadataCommand, result: ApplyResult) => void) | undefined;
  /**
   * The operator accepts the loss of what a damaged single node's metadata group lacks
   * (BROOK_ACCEPT_METADATA_LOSS): instead of refusing to start, it keeps what it holds (Restored.acceptLoss).
   */
  readonly acceptLoss?: boolean | undefined;
}

export interface Restored {
  readonly store: RaftLogStore;
  readonly sm: MetadataStateMachine;
  /** The configuration as of `applied`. */
  readonly conf: ConfState;
  readonly applied: Index;
  /** This node's member id in the group (a new one when `newMember` made it). */
  readonly member: NodeId;
  /**
   * A damaged single node whose loss the operator accepted: the group's member takes what it holds as
   * the group's log once it runs (src/raft RawNode.acceptLoss, at the node's term ceiling).
   */
  readonly acceptLoss: boolean;
}

export async function restoreMetadata(o: RestoreOptions): Promise<Restored> {
  const log = o.logger;
  const store = await RaftLogStore.open(o.kv, metadataGroupId, { disk: o.disk, keepsCommit: true });
  let member = o.self;
  const lost = o.disk?.identity.lostRaftState;
  const founding = o.founders.length > 0 && lost === undefined;
  // Somebody must be there to add a new member: a single node that lost its raft state starts damaged
  // instead, and refuses to start (checkDamage), as before.
  const others = new Set([...o.founders, ...o.known]);
  others.delete(o.self);
  const mayBeNew = store.isEmpty && !founding && store.damage === undefined && o.newMember !== undefined && others.size > 0;
  // Partition records written under the present member id: a new id would orphan them (and drop the
  // only copy of a partition with one replica). Asked only when a new id would be made.
  const held = mayBeNew ? await o.partitionState?.() : undefined;
  if (mayBeNew && held === undefined) {
    // A wiped, new or state-losing directory is a NEW member (docs/metadata-raft.md, "A wiped
    // directory is a new member"): nothing its former self voted or acknowledged is taken for its
    // word, and it needs neither a damage mark nor a term floor. It starts empty, outside the
    // configuration, until the leader adds it.
    member = await o.newMember!();
    log.warn({ raftId: member, node: o.self, replaces: o.self === member ? undefined : 'the node\'s former member' }, 'this node holds no metadata raft state and does not found the group: it starts as a new, empty member and waits for the metadata leader to add it');
  } else if (store.isEmpty) {
    if (held !== undefined) {
      log.error(
        { raftId: member, node: o.self, partitionState: held },
        'this node holds no metadata raft state but holds partition raft state: it keeps its member id (its partition replicas were written under it; a new one would orphan them, and drop a partition whose only replica is here) and starts the metadata group empty and damaged, to be repaired by the leader',
      );
    }
    // A node that lost raft state cannot tell whether it held this group (node-disk.ts): founding it
    // again (term 1, no vote) could vote twice in a term. It starts empty and damaged instead.
    // Nothing here bounds the terms a former state of this node used in the group: it learns a term
    // floor from the other members before it acknowledges anything (src/raft Damage.termUnknown).
    if (lost !== undefined) await store.startEmpty([], `this node started with no metadata raft state after losing raft writes (${lost})`, true);
    else await store.startEmpty(o.founders, 'this node started with no metadata raft state and joined an existing cluster (a new member, or a former one whose data directory was wiped)', true);
    if (lost === undefined && o.founders.length > 0) log.info({ founders: o.founders }, 'founded the metadata raft group');
  }
  const acceptLoss = checkDamage({ ...o, self: member }, store);
  const storage = store.storage;
  const snap = storage.snapshot();
  const sm = snap.metadata.index > 0 ? decodeImage(snap.data) : new MetadataStateMachine();
  let conf = snap.metadata.confState;
  const hs = storage.hardState();
  let commit = Math.max(hs.commit, snap.metadata.index);
  const tail = storage.entries(snap.metadata.index + 1, storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER);
  const confAt = (index: Index): ConfState => {
    let c = snap.metadata.confState;
    for (const e of tail) if (e.index <= index && e.type === 'confChange') c = applyConfChangeToState(c, decodeConfChange(e.data));
    return c;
  };
  const last = storage.lastIndex();
  const alone = (c: ConfState) => c.voters.length === 1 && c.voters[0] === member && c.learners.length === 0;
  if (commit < last && alone(confAt(commit)) && alone(confAt(last))) {
    // The only voter: every entry in its durable log was written by itself as leader and is
    // committed (a majority of one). The stored commit index lags (it is written only with a term or
    // vote change); taking the whole log now restores at open everything a client was told is done.
    commit = last;
    await store.persist({ snapshot: undefined, entries: [], hardState: { ...hs, commit }, mustSync: false });
  }
  const applied = commit;
  for (const e of tail.filter((x) => x.index <= applied)) {
    if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
    else if (e.data.byteLength > 0) applyCommand(sm, e, o);
  }
  log.info({ raftId: member, snapshotIndex: snap.metadata.index, applied, lastIndex: storage.lastIndex(), term: storage.hardState().term, voters: conf.voters, learners: conf.learners }, 'metadata raft group restored');
  if (acceptLoss && !(conf.voters.length === 1 && conf.voters[0] === member && conf.learners.length === 0)) {
    throw new Error(
      `the metadata raft log of this single-node cluster is damaged and holds no configuration naming this node as its only voter (voters ${conf.voters.join(', ') || 'none'}): ` +
        'there is nothing to keep by accepting the loss. Restore the data directory from a backup; or, to start afresh, move it aside (every event type and subscription is lost).',
    );
  }
  if (acceptLoss) {
    const d = store.damage!;
    log.error(
      { raftId: member, damage: d.reason, damagedTerm: d.term, damagedIndex: d.index, lastIndex: storage.lastIndex() },
      `ACCEPTED DATA LOSS of the metadata of this single-node cluster (BROOK_ACCEPT_METADATA_LOSS): its raft log is damaged (${d.reason}); ` +
        `it keeps what it holds (raft index ${storage.lastIndex()}) and leads above every term it may have used; metadata changes acknowledged after that are gone. ` +
        'Unset BROOK_ACCEPT_METADATA_LOSS for the next start.',
    );
  }
  return { store, sm, conf, applied, member, acceptLoss };
}

/**
 * Applies the command of a committed entry. A malformed one (the state machine checks every command:
 * metadata/shapes.ts) is refused alike on every node, logged, and not passed on: the rest of the node
 * reads commands as the state machine accepted them.
 */
export function applyCommand(
  sm: MetadataStateMachine,
  e: Entry,
  o: { readonly self: NodeId; readonly logger: Logger; readonly onApplied?: ((cmd: MetadataCommand, result: ApplyResult) => void) | undefined },
): ApplyResult {
  const cmd = decodeCommand(e.data);
  const result = sm.apply(sm.appliedIndex + 1, cmd);
  if (!result.ok && result.malformed === true) {
    o.logger.warn({ raftId: o.self, index: e.index, term: e.term, problem: result.detail }, 'dropped a malformed metadata command (refused on every node)');
    return result;
  }
  // Not inside `onApplied?.(...)`: an optional call skips evaluating its arguments.
  o.onApplied?.(cmd, result);
  return result;
}

/**
 * Logs what was found on a damaged member, and refuses to start one that no other member could repair
 * (the only voter of its group): serving from it would hide the loss of acknowledged writes. Unless
 * the operator accepts the loss (`acceptLoss`): then it returns true.
 */
function checkDamage(o: RestoreOptions, store: RaftLogStore): boolean {
  const d = store.damage;
  if (d === undefined) return false;
  const conf = store.storage.snapshot().metadata.confState;
  const others = new Set([...conf.voters, ...conf.learners, ...o.founders, ...o.known]);
  others.delete(o.self);
  if (others.size === 0) {
    // Accepted: restoreMetadata checks that there is something to keep, and says so loudly.
    if (o.acceptLoss === true) return true;
    throw new Error(
      `the metadata raft log of this single-node cluster is damaged: ${d.reason}. No other member holds a copy to repair it from. ` +
        'Restore the data directory from a backup; or, to start afresh, move it aside (every event type and subscription is lost); ' +
        'or, to keep what it holds and lose what it lacks, start it once with BROOK_ACCEPT_METADATA_LOSS=true (docs/metadata-raft.md).',
    );
  }
  o.logger.error({ raftId: o.self, damage: d.reason, damagedTerm: d.term, damagedIndex: d.index }, 'metadata raft log damaged: this node will not vote or lead until a healthy leader has repaired it');
  return false;
}
