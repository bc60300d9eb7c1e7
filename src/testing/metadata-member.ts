/**
 * A metadata group member for in-process tests: the production RaftMetadataGroup on its own node host
 * (RaftNodeHost, real timers), as a node runs it, minus the partitions. Tests wire members with an
 * in-memory transport that carries both the host's messages and the group's forwarded proposals.
 */
import { RaftMetadataGroup, type MetadataGroupOptions, type MetadataTransport } from '../broker/metadata-group.js';
import { RaftNodeHost, systemTicks, type GroupTransport } from '../broker/raft-host/node-host.js';
import { systemClock, systemRandom } from '../broker/system.js';

/** What a test's network gives a member: the host's sends (every group) and the group's forwards. */
export interface MemberTransport extends GroupTransport, MetadataTransport {}

const hosts = new WeakMap<RaftMetadataGroup, RaftNodeHost>();

/** The fast timings, real clock and randomness the metadata group tests open their members with. */
export const fastMemberTimings = {
  tickMs: 5,
  electionTicks: 10,
  heartbeatTicks: 1,
  snapshotEntries: 1000,
  proposalTimeoutMs: 2000,
  clock: systemClock,
  random: systemRandom,
} as const;

/** Opens a member on a node host of its own (not started: see startMember). */
export async function openMember(o: Omit<MetadataGroupOptions, 'host'>): Promise<RaftMetadataGroup> {
  const host = new RaftNodeHost({
    self: o.self,
    kv: o.kv,
    ...(o.disk === undefined ? {} : { disk: o.disk }),
    tickMs: o.tickMs,
    clock: o.clock,
    ticks: systemTicks,
    logger: o.logger,
    onFatal: (err) => {
      if (o.onFatal === undefined) throw err;
      o.onFatal(err);
    },
  });
  const g = await RaftMetadataGroup.open({ ...o, host });
  hosts.set(g, host);
  return g;
}

/** Starts the member's host (ticks, sends through `t`) and the group on it. */
export function startMember(g: RaftMetadataGroup, t: MemberTransport | undefined): void {
  hostOf(g).start(t);
  g.start(t);
}

export function hostOf(g: RaftMetadataGroup): RaftNodeHost {
  const h = hosts.get(g);
  if (h === undefined) throw new Error(`node ${g.self} was not opened by openMember`);
  return h;
}

/** Closes the group, then its host. */
export async function closeMember(g: RaftMetadataGroup): Promise<void> {
  await g.close();
  await hosts.get(g)?.close();
}

/** Waits (polling every 5 ms, `ms` at most) until `ok`, or fails naming `what`. */
export async function until(what: string, ms: number, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
