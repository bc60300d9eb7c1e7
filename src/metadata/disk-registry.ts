/**
 * Which data directory each node runs on, as far as founding partition groups is concerned. PURE.
 *
 * Why it exists. A partition replica that finds no Raft state for its group founds it (term 0, the
 * founding configuration) when its node is one of the group's founders. That is only safe if this data
 * directory never held the group: a node whose directory was wiped (or whose RocksDB lost raft writes)
 * may have voted and acknowledged entries in the group before, and founding afresh would forget both
 * (a second vote in a term; a committed entry that no longer has a majority). Such a directory must
 * join the groups that existed before it as an empty, damaged member that its leader repairs.
 *
 * Telling "existed before" from "created after" needs an order every node agrees on: the metadata log.
 * A directory that did not found the cluster registers itself (`node.disk`); the registration records
 * the partition group counter at apply. Group ids are handed out from that counter in log order, so a
 * group numbered at or above `firstGroup` was created after the registration, hence after this
 * directory existed, and cannot have been held by a former one. Every group below it, and every legacy
 * group (derived ids, placement-types.ts), may have been.
 *
 * The token names the directory and the raft-state losses it has recorded (node-disk.ts): a directory
 * that lost raft writes after registering registers again, so groups created between the two
 * registrations (whose every record may have been in the lost tail) are not founded afresh either.
 */
import { incarnationOfMember, nodeOfMember } from '../core/member-id.js';
import { legacyGroupIdBase } from './placement-types.js';

export interface DiskRegistration {
  readonly node: number;
  /** diskToken(...) of the registered directory. */
  readonly disk: string;
  /** The first partition group id created after the registration. */
  readonly firstGroup: number;
  /** The directory's metadata member id when it is a new member (node.disk), absent otherwise. */
  readonly member?: number;
  /** Member ids earlier directories of the node registered: never taken again (node.disk refuses them). */
  readonly formerMembers?: readonly number[];
}

/**
 * Whether the metadata member `current` of node `node` answers a term probe addressed to `member` in
 * its place (docs/metadata-raft.md, "A wiped directory is a new member"): `member` is an earlier
 * directory's member of that node, as the node's registration (applied here) records. That is the
 * node's original member (incarnation 0: a founder's directory or one from before member ids; a new
 * member never takes incarnation 0) or one of its former members; and the registration names
 * `current`, so the directory that ran `member` was replaced before `current` registered. Whether the
 * answer counts is the core's part (src/raft, Raft.step: only once `current` holds the configuration
 * entry that added it).
 */
export function answersForFormerMember(registration: DiskRegistration | undefined, node: number, current: number, member: number): boolean {
  if (registration === undefined || registration.node !== node || registration.member !== current || member === current) return false;
  if (nodeOfMember(member) !== node || incarnationOfMember(current) === 0) return false;
  return incarnationOfMember(member) === 0 || (registration.formerMembers ?? []).includes(member);
}

/** At most this many member ids of earlier directories are kept per node (then registrations are refused). */
export const formerMembersMax = 256;

/** The disk id part of a token (diskToken): one directory keeps it across its losses. */
export function diskIdOfToken(token: string): string {
  const cut = token.lastIndexOf('/lost-');
  return cut < 0 ? token : token.slice(0, cut);
}

/** At most this many nodes are registered (a bound on what a command can make the state hold). */
export const registeredDisksMax = 1024;
/** A token is a disk id (a UUID) and a loss count: far below this. */
export const diskTokenBytesMax = 128;

/** The token of a directory with `diskId` that recorded `losses` raft-state losses. */
export function diskToken(diskId: string, losses: number): string {
  return losses === 0 ? diskId : `${diskId}/lost-${losses}`;
}

/**
 * Whether this node may found group `group` when it holds no state for it (it is one of the group's
 * founders; that check is the caller's). `foundingDisk`: this directory founded the cluster and never
 * lost raft state, so it never held a group it holds no state for.
 */
export function mayFoundGroup(group: number, self: { readonly token: string; readonly foundingDisk: boolean }, registration: DiskRegistration | undefined): boolean {
  if (self.foundingDisk) return true;
  if (registration === undefined || registration.disk !== self.token) return false;
  return group >= registration.firstGroup && group < legacyGroupIdBase;
}

/** What a node knows of the data directory it runs on, for supersededBy. */
export interface OwnDirectory {
  readonly node: number;
  /** The directory's disk id (node-disk.ts; not the token, which also counts losses). */
  readonly diskId: string;
  /** The metadata member id it runs (the node id unless it joined as a new member). */
  readonly member: number;
}

/**
 * Why this data directory must not run any more, or undefined: the metadata applied here shows that a
 * later directory of the same node registered (docs/metadata-raft.md, "An old data directory that runs
 * again"). The term-probe rule that lets a new member answer for its node's former one assumes that a
 * directory never runs again once a later one registered: brought back (a backup restored, two
 * directories swapped), it could vote and acknowledge under its former member id after the
 * registration.
 *
 * A later directory is told from an earlier one by the member ids, never by the disk id alone: a new
 * directory that has not registered yet sees its predecessor's registration, which is older, and must
 * go on. Later for sure:
 * - our member id is among the registration's former members: a registration naming another member
 *   replaced the one that named ours (a directory that made a new member id after a loss runs that
 *   new id, so it is never its own former member);
 * - we run the node id (incarnation 0: a founder's directory, one migrated from before identities, or
 *   one that joined before member ids existed) and the registration names a new member of another
 *   directory: a new member id is only made by a directory that joined an existing cluster since member
 *   ids exist, after every directory of the node that runs the node id.
 * The registration of our own directory (same disk id, whatever its loss count) never supersedes us.
 */
export function supersededBy(registration: DiskRegistration | undefined, self: OwnDirectory): string | undefined {
  if (registration === undefined || registration.node !== self.node) return undefined;
  if (diskIdOfToken(registration.disk) === self.diskId) return undefined;
  const later = `a later data directory of node ${self.node} (disk ${registration.disk}${registration.member === undefined ? '' : `, metadata member ${registration.member}`}) registered in the metadata after this one (disk ${self.diskId}, metadata member ${self.member})`;
  if ((registration.formerMembers ?? []).includes(self.member)) return later;
  if (self.member === self.node && registration.member !== undefined && incarnationOfMember(registration.member) !== 0) return later;
  return undefined;
}

/**
 * Why this data directory must not run any more, told by a raft message a peer addressed to member `to`
 * of this node (not the one this directory runs), or undefined. `registration`: this node's, as the
 * metadata applied here holds it. This tells a directory brought back after its member was removed
 * from the configuration, which no leader sends entries any more (so it never applies the registration
 * that superseded it), as soon as a peer addresses the later member (a leader's probe or heartbeat when
 * this node's process restarted). Later for sure:
 * - we run the node id (a founder's directory, a migrated one, or one that joined before member ids
 *   existed) and `to` is a new member id: every directory with a new member id was made after it
 *   (supersededBy);
 * - the registration applied here is our own (our disk id, our member id) and `to` is a new member id
 *   it does not list among the node's former members: when our registration was applied, every earlier
 *   directory's new member id was in that list (node.disk moves the previous one there).
 * Otherwise a directory cannot tell a later member from an earlier one this way: its predecessor's
 * member is still addressed until the leader has replaced it.
 */
export function supersededByMessageTo(to: number, self: OwnDirectory, registration?: DiskRegistration): string | undefined {
  if (to === self.member || nodeOfMember(to) !== self.node || incarnationOfMember(to) === 0) return undefined;
  const ownRegistration = registration !== undefined && registration.node === self.node && registration.member === self.member && diskIdOfToken(registration.disk) === self.diskId && !(registration.formerMembers ?? []).includes(to);
  if (self.member !== self.node && !ownRegistration) return undefined;
  return `a peer addressed metadata or partition member ${to} of node ${self.node}: a later data directory of node ${self.node} runs it, and this one (disk ${self.diskId}, member ${self.member}) was made before it`;
}
