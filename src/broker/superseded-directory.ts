/**
 * Stops a node whose data directory is no longer its node's (docs/metadata-raft.md, "An old data
 * directory that runs again"): the metadata it applied shows that a later directory of the node
 * registered (metadata/disk-registry.ts, supersededBy). Such a directory (a backup restored, two
 * directories swapped) must take no part in any raft group: under its former member id it could vote
 * and acknowledge after the registration, which the term-probe rule for former members assumes never
 * happens. So the node stops at once, from inside the apply that told it (nothing more is sent), and
 * refuses to start when the metadata it restores already tells it.
 */
import type { DiskRegistration } from '../metadata/disk-registry.js';
import { supersededBy, supersededByMessageTo } from '../metadata/disk-registry.js';

/** The exit status of a node stopped because its data directory was superseded (EX_CONFIG). */
export const supersededExitCode = 78;

export interface SupersededGuardDeps {
  readonly node: number;
  readonly diskId: () => string;
  /** The metadata member id the directory runs now (node-disk.ts, metadataMember). */
  readonly member: () => number;
  /** Whether member() is the id the directory keeps (a new directory makes its own as the metadata group opens). */
  readonly memberDecided: () => boolean;
  /** Called with the operator's message; must not return control to raft (production: log and exit). */
  readonly stop: (message: string, reason: string) => void;
}

/** The message for the operator: what was found and what to do. */
export function supersededMessage(reason: string, node: number): string {
  return `${reason}: this data directory is an old copy of node ${node}'s and must not run again (its votes and acknowledgements under its former metadata member id would count as a replaced member's). Stopping without taking part in any raft group. Move this directory aside (or wipe it) and start node ${node} with an empty data directory: it joins the cluster as a new member and the cluster replaces its current member by it`;
}

/**
 * Checks the registration of this node in the metadata applied here; stops the node (deps.stop) when
 * a later directory registered. Returns whether it did.
 */
export function checkSuperseded(d: SupersededGuardDeps, registration: DiskRegistration | undefined): boolean {
  // A new directory runs the node id until it makes its member id: a registration naming a new member
  // of its node would look later than it (supersededBy's second case).
  if (!d.memberDecided()) return false;
  const reason = supersededBy(registration, { node: d.node, diskId: d.diskId(), member: d.member() });
  if (reason === undefined) return false;
  d.stop(supersededMessage(reason, d.node), reason);
  return true;
}

/** Checks a raft message addressed to member `to` of this node, not the one the group runs here. */
export function checkMessageTo(d: SupersededGuardDeps, to: number, registration: DiskRegistration | undefined): boolean {
  if (!d.memberDecided()) return false;
  const reason = supersededByMessageTo(to, { node: d.node, diskId: d.diskId(), member: d.member() }, registration);
  if (reason === undefined) return false;
  d.stop(supersededMessage(reason, d.node), reason);
  return true;
}
