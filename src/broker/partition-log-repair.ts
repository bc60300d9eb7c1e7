/**
 * The repair of a corrupt partition log from another replica: committed entries that fail their
 * checks are replaced by the same entries of a healthy replica (FetchLog serves applied entries
 * only, and those are the same on every replica that holds them).
 */
import { decodeEntryHead } from '../log/partition-entry.js';
import { decodeConfChange, noNode, type Entry } from '../raft/index.js';
import { logChunkBytes, replicaKey, type ReplicasContext } from './partition-replicas-context.js';
import { RaftLogStore } from './raft-log-store.js';

/** How long one replica may take to send the entries that repair a corrupt log. */
const repairFetchMs = 30_000;

/** Why an entry sent to repair a corrupt one cannot be stored, or undefined. */
function committedEntryProblem(e: Entry): string | undefined {
  try {
    if (e.type === 'confChange') decodeConfChange(e.data);
    else if (e.data.byteLength > 0) decodeEntryHead(Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength), false);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Replaces the stored entries [from, to] of a group with the same committed entries of another
 * replica (fetched with FetchLog, which serves applied entries only, in bounded chunks), each checked
 * before it is written (the partition entry's own CRC32C, a configuration change's encoding), in
 * one durable write per chunk. 'alone' when no other replica exists to ask.
 *
 * `live` is asked right before each chunk's write is issued: a replica dropped meanwhile (moved
 * away, event type deleted) writes nothing more, since a write issued after the drop's delete would
 * leave the entries behind (a fetch from another node takes long enough for a drop to come). A write
 * issued before it lands before it (the KV applies writes in call order). A repair before the
 * replica opens needs no check: a drop waits for the open.
 */
export async function repairEntries(c: ReplicasContext, topic: number, partition: number, group: number, from: number, to: number, live: () => boolean = () => !c.closed): Promise<'repaired' | 'alone'> {
  const fetchLog = c.forwarder?.fetchLog?.bind(c.forwarder);
  const p = c.o.placement(topic, partition);
  const leader = c.byKey.get(replicaKey(topic, partition))?.group.leader;
  const peers = c.otherNodes([leader ?? noNode, ...(p?.replicas ?? [])]);
  if (peers.length === 0 || fetchLog === undefined) return 'alone';
  let next = from;
  const failures: string[] = [];
  for (const peer of peers) {
    try {
      const signal = AbortSignal.timeout(repairFetchMs);
      for await (const chunk of fetchLog(peer, { group, fromIndex: next, toIndex: to, maxBytes: logChunkBytes }, signal)) {
        for (const e of chunk.entries) {
          const problem = committedEntryProblem(e);
          if (problem !== undefined) throw new Error(`its entry ${e.index} fails its check too: ${problem}`);
        }
        if (chunk.entries[0]?.index !== next) throw new Error(`it sent entry ${chunk.entries[0]?.index}, not ${next}`);
        if (!live()) throw new ReplicaDroppedError();
        await RaftLogStore.replaceEntries(c.o.kv, group, chunk.entries, c.o.disk);
        next = chunk.entries[chunk.entries.length - 1]!.index + 1;
      }
      if (next > to) return 'repaired';
      failures.push(`node ${peer} holds the entries up to ${next - 1} only`);
    } catch (err) {
      if (err instanceof ReplicaDroppedError) throw err;
      failures.push(`node ${peer}: ${(err as Error).message}`);
    }
  }
  throw new Error(failures.join('; '));
}

/** A repair of a replica dropped while it ran: it writes nothing more. */
class ReplicaDroppedError extends Error {
  constructor() {
    super('the replica was dropped (moved away, or its event type deleted) during the repair');
  }
}
