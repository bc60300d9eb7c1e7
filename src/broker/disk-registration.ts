/**
 * Registers this node's data directory in the metadata when it did not found the cluster (a wiped or
 * new directory that joined, or one that lost raft writes): from the registration on, partition groups
 * created afterwards are founded here normally, while older ones start empty and are repaired by their
 * leaders (metadata/disk-registry.ts has the rule, partition-replicas.ts applies it).
 *
 * Until the registration is applied, every group this node holds no state for starts empty: safe, and
 * for groups of three or more replicas only a short wait for their leader's repair. So the node keeps
 * proposing in the background until its registration is in the metadata it applies (a multi-node
 * cluster may not have a leader yet, or this node may still be catching up).
 */
import type { MetadataCommand } from '../metadata/commands.js';
import type { DiskRegistration } from '../metadata/disk-registry.js';
import type { ApplyResult } from '../metadata/state-machine.js';

export interface DiskRegistrationDeps {
  readonly node: number;
  /** This directory's token (node-disk.ts, diskTokenOf), read each time: a loss found at run time changes it. */
  readonly token: () => string;
  /**
   * This directory's metadata member id when it joined as a new member (node-disk.ts), read each time;
   * undefined when its member is the node id. The registration names it, and the metadata leader
   * replaces the node's former member by it (metadata-replacement.ts).
   */
  readonly member?: () => number | undefined;
  /** Whether this directory needs no registration (node-disk.ts, isFoundingDisk). */
  readonly foundingDisk: () => boolean;
  /** The registration the metadata this node applied holds for it. */
  readonly registered: () => DiskRegistration | undefined;
  readonly propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
  readonly sleep: (ms: number) => Promise<void>;
  readonly stopped: () => boolean;
  readonly retryMs: number;
  readonly logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Proposes the registration until the metadata holds it (or the node stops). Never throws. */
export async function registerDisk(d: DiskRegistrationDeps): Promise<void> {
  for (let attempt = 0; !d.stopped(); attempt++) {
    if (d.foundingDisk()) return;
    const token = d.token();
    const member = d.member?.();
    const have = d.registered();
    if (have?.disk === token && have.member === member) {
      if (attempt > 0) d.logger.info({ disk: token, firstGroup: have.firstGroup }, 'this data directory is registered in the metadata: partition groups from this first group id on are founded here, older ones are joined empty and repaired by their leaders');
      return;
    }
    try {
      const r = await d.propose({ op: 'node.disk', node: d.node, disk: token, ...(member === undefined ? {} : { member }) });
      if (!r.ok) d.logger.warn({ disk: token, reason: r.reason, detail: r.detail }, 'registering this data directory in the metadata was refused; retrying');
    } catch (err) {
      if (attempt % 10 === 0) d.logger.warn({ err, disk: token }, 'registering this data directory in the metadata failed (no metadata leader yet?); retrying');
    }
    // The proposal's answer comes from the leader; this node applies the entry a little later.
    const now = d.registered();
    if (now?.disk !== d.token() || now.member !== d.member?.()) await d.sleep(d.retryMs);
  }
}
