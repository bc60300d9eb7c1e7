/**
 * The Raft safety properties (Raft paper, figure 3), checked by name after every simulated event.
 * Each check is incremental, so the whole suite costs O(1) per event except Leader Completeness,
 * which walks the committed prefix once per election.
 *
 * - ElectionSafety: at most one leader is elected in a term.
 * - LogMatching: if two logs hold an entry with the same index and term, the logs are identical up
 *   to that index. Checked inductively: every (index, term) ever written names one entry content
 *   and one predecessor term, cluster-wide.
 * - CommittedPrefix: every node's commit index is covered by what some leader committed, and the
 *   node's entry at its commit index is the committed one.
 * - LeaderCompleteness: a leader of term T holds every entry committed in a term before T.
 * - StateMachineSafety: no two nodes apply different entries at an index (compared through a hash
 *   chain of everything applied, which also covers state restored from snapshots).
 *
 * Two rules of the paper are checked as they are applied, not only through their consequences, since
 * the runs that turn their violation into lost data are rare (figure 8 needs a leader to commit an
 * old entry, crash, and a rival with a newer conflicting entry to win; a stale vote must decide an
 * election that a rival wins too):
 * - VoteQuorum (§5.2): a leader of term T received votes granted in term T from a majority of its
 *   voters (grants are recorded as the network delivers them); VoteTally: a candidate of term T
 *   counts no grant that was not given in term T (the same rule, seen on every answer it counts).
 * - CommitOwnTerm (§5.4.2): a leader's commit index moves only to an entry of its own term; older
 *   entries are committed only indirectly, by Log Matching.
 * - TermFloor (docs/metadata-raft.md, "A member whose past term is unknown"): a member that starts
 *   with its past term unknown (its data directory wiped) takes no term below the highest term of an
 *   entry committed when it started. Such an entry is on a majority that includes, or overlaps the
 *   voters it asks for, its former self; taking a lower term it could acknowledge a leader deposed
 *   since, which then commits over that entry. The loss needs the deposed leader to reach it and
 *   commit before the newer one does; the rule is seen on the first term it takes.
 */
import type { Entry, Index, NodeId, Term } from '../raft/index.js';
import { chainHash } from './kv.js';

export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  readonly invariant: string;

  constructor(invariant: string, detail: string) {
    super(`${invariant}: ${detail}`);
    this.invariant = invariant;
  }
}

interface CommittedEntry {
  readonly term: Term;
  /** The term of the leader that first committed it. */
  readonly commitTerm: Term;
}

export interface LogView {
  termAt(i: Index): Term | undefined;
  firstIndex(): Index;
}

export class Invariants {
  /** Whether the rule checks (VoteQuorum, CommitOwnTerm) run; off, only consequences are checked. */
  readonly rules: boolean;

  constructor(opts: { rules?: boolean } = {}) {
    this.rules = opts.rules ?? true;
  }

  readonly #leaderByTerm = new Map<Term, NodeId>();
  readonly #entries = new Map<string, { fingerprint: number; prevTerm: Term | undefined }>();
  readonly #committed: CommittedEntry[] = [{ term: 0, commitTerm: 0 }];
  readonly #appliedHash = new Map<Index, number>();
  /** "term:candidate" -> voters whose grant of that term was delivered to the candidate. */
  readonly #grants = new Map<string, Set<NodeId>>();
  /** The highest term of a committed entry. */
  #committedTermMax: Term = 0;
  /** Members that started with their past term unknown: the term they started at, the floor they must not take a term below. */
  readonly #termFloors = new Map<NodeId, { from: Term; floor: Term }>();
  /** Per leader: the term and commit index it was last seen with. */
  readonly #leaderCommit = new Map<NodeId, { term: Term; commit: Index }>();

  get committedIndex(): Index {
    return this.#committed.length - 1;
  }

  /** The founding entries of a new group are committed by construction, before any leader exists. */
  bootstrapped(entries: readonly Entry[]): void {
    for (const e of entries) {
      if (e.index === this.committedIndex + 1) {
        this.#committed.push({ term: e.term, commitTerm: 0 });
        this.#committedTermMax = Math.max(this.#committedTermMax, e.term);
      }
    }
  }

  electionSafety(node: NodeId, term: Term): void {
    const other = this.#leaderByTerm.get(term);
    if (other === undefined) this.#leaderByTerm.set(term, node);
    else if (other !== node) {
      throw new InvariantViolation('ElectionSafety', `nodes ${other} and ${node} both led term ${term}`);
    }
  }

  /** A node is about to persist `entries`, which its log (view) already holds. */
  logMatching(node: NodeId, entries: readonly Entry[], view: LogView): void {
    for (const e of entries) {
      const key = `${e.index}:${e.term}`;
      const fingerprint = chainHash(0, e);
      const prevTerm = e.index > view.firstIndex() - 1 ? view.termAt(e.index - 1) : undefined;
      const seen = this.#entries.get(key);
      if (seen === undefined) {
        this.#entries.set(key, { fingerprint, prevTerm });
        continue;
      }
      if (seen.fingerprint !== fingerprint) {
        throw new InvariantViolation('LogMatching', `node ${node} holds a different entry at index ${e.index} term ${e.term}`);
      }
      if (seen.prevTerm !== undefined && prevTerm !== undefined && seen.prevTerm !== prevTerm) {
        throw new InvariantViolation(
          'LogMatching',
          `node ${node}: entry ${e.index}@${e.term} follows term ${prevTerm}, elsewhere term ${seen.prevTerm}`,
        );
      }
    }
  }

  /** After every event on a leader: record what its commit index newly covers. */
  leaderCommitted(node: NodeId, term: Term, commit: Index, view: LogView): void {
    for (let i = this.committedIndex + 1; i <= commit; i++) {
      const t = view.termAt(i);
      if (t === undefined) {
        throw new InvariantViolation('CommittedPrefix', `leader ${node} committed ${i} but cannot name its term`);
      }
      this.#committed.push({ term: t, commitTerm: term });
      this.#committedTermMax = Math.max(this.#committedTermMax, t);
    }
  }

  /**
   * A member starts with its past term unknown (Damage.termUnknown) at term `term`: the next term it
   * takes must be at least the highest term of an entry committed now (TermFloor).
   */
  termUnknown(node: NodeId, term: Term): void {
    if (term >= this.#committedTermMax) this.#termFloors.delete(node);
    else this.#termFloors.set(node, { from: term, floor: this.#committedTermMax });
  }

  /** After every event on any member: a member that started with its past term unknown took no term below its floor. */
  termFloor(node: NodeId, term: Term): void {
    const f = this.#termFloors.get(node);
    if (f === undefined || term === f.from) return;
    this.#termFloors.delete(node);
    if (this.rules && term < f.floor) {
      throw new InvariantViolation('TermFloor', `node ${node} started with its past term unknown at term ${f.from} and took term ${term}, below term ${f.floor} of an entry committed before`);
    }
  }

  /** After every event on any node: its commit index must name a committed entry. */
  committedPrefix(node: NodeId, commit: Index, view: LogView): void {
    if (commit > this.committedIndex) {
      throw new InvariantViolation('CommittedPrefix', `node ${node} commit ${commit} beyond any leader's ${this.committedIndex}`);
    }
    const t = view.termAt(commit);
    const want = this.#committed[commit]!.term;
    if (t !== undefined && commit > 0 && t !== want) {
      throw new InvariantViolation('CommittedPrefix', `node ${node} has term ${t} at its commit ${commit}, committed term ${want}`);
    }
  }

  /** When a node becomes leader of `term`. */
  leaderCompleteness(node: NodeId, term: Term, view: LogView): void {
    const first = view.firstIndex();
    for (let i = first; i <= this.committedIndex; i++) {
      const c = this.#committed[i]!;
      if (c.commitTerm >= term) continue;
      const t = view.termAt(i);
      if (t !== c.term) {
        throw new InvariantViolation(
          'LeaderCompleteness',
          `leader ${node} of term ${term} has ${t === undefined ? 'no entry' : `term ${t}`} at ${i}, committed with term ${c.term} in term ${c.commitTerm}`,
        );
      }
    }
  }

  /** The network delivered `voter`'s granted vote of `term` to `candidate`. */
  voteGranted(candidate: NodeId, voter: NodeId, term: Term): void {
    const key = `${term}:${candidate}`;
    let s = this.#grants.get(key);
    if (s === undefined) this.#grants.set(key, (s = new Set()));
    s.add(voter);
  }

  /**
   * After every event on a candidate of `term`: every grant it counts (besides its own) is one the
   * network delivered to it in that term. Checks the rule where it is applied, on every stale answer
   * that reaches a later campaign, not only on the rare one that tips an election (VoteQuorum).
   */
  voteTally(node: NodeId, term: Term, votes: ReadonlyMap<NodeId, boolean>): void {
    if (!this.rules) return;
    const granted = this.#grants.get(`${term}:${node}`);
    for (const [v, yes] of votes) {
      if (yes && v !== node && granted?.has(v) !== true) {
        throw new InvariantViolation('VoteTally', `candidate ${node} of term ${term} counts a grant from ${v} that was not granted in term ${term}`);
      }
    }
  }

  /** When a node becomes leader of `term` under `voters`. */
  voteQuorum(node: NodeId, term: Term, voters: readonly NodeId[]): void {
    if (!this.rules) return;
    const granted = this.#grants.get(`${term}:${node}`) ?? new Set<NodeId>();
    const n = voters.filter((v) => v === node || granted.has(v)).length;
    if (2 * n <= voters.length) {
      throw new InvariantViolation('VoteQuorum', `node ${node} leads term ${term} with grants of that term from [${[...granted].join(',')}] of voters [${voters.join(',')}]`);
    }
  }

  /** After every event on a leader: a move of its commit index lands on an entry of its term. */
  leaderCommitRule(node: NodeId, term: Term, commit: Index, view: LogView): void {
    if (!this.rules) return;
    const last = this.#leaderCommit.get(node);
    this.#leaderCommit.set(node, { term, commit });
    if (last === undefined || last.term !== term || commit <= last.commit) return;
    const t = view.termAt(commit);
    if (t !== undefined && t !== term) {
      throw new InvariantViolation('CommitOwnTerm', `leader ${node} of term ${term} moved its commit index from ${last.commit} to ${commit}, an entry of term ${t}`);
    }
  }

  /** The node is no longer leader (or restarted): its next leadership starts a new record. */
  notLeader(node: NodeId): void {
    this.#leaderCommit.delete(node);
  }

  /** A node's state machine reached `index` with running hash `hash`. */
  stateMachineSafety(node: NodeId, index: Index, hash: number): void {
    const seen = this.#appliedHash.get(index);
    if (seen === undefined) this.#appliedHash.set(index, hash);
    else if (seen !== hash) {
      throw new InvariantViolation('StateMachineSafety', `node ${node} applied a different history up to index ${index}`);
    }
  }
}
