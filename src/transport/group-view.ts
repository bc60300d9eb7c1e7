/**
 * One group's view of the multi-group transport, for code written against a single group's
 * transport: RaftMetadataGroup's MetadataTransport (send a Ready's messages, forward a proposal, ask
 * whether a peer is reachable) is this view of group 0.
 */
import type { GrpcTransport } from './raft-transport.js';
import { metadataGroup, type SingleGroupTransport } from './types.js';

export function metadataTransport(t: Pick<GrpcTransport, 'send' | 'forward' | 'reachable'>): SingleGroupTransport {
  return {
    send: (msgs) => t.send([{ group: metadataGroup, messages: msgs }]),
    forward: (to, req) => t.forward(to, req),
    reachable: (id) => t.reachable(id),
  };
}
