/**
 * Authentication of the node-to-node port: every call, streams included, must come from a member of
 * the cluster and prove it, before any handler runs.
 *
 * Two ways to prove it, usable together:
 * - A cluster secret shared by every node. Each call carries `x-brook-auth: v1.<ms>.<nonce>.<mac>`,
 *   mac = HMAC-SHA256(secret, "brook-node-auth/v1", caller id, receiver id, method, ms, nonce). The
 *   secret never travels; a proof is good for one receiver, one method, one use (nonces are
 *   remembered for as long as a proof is fresh) and at most proofAgeMsMax around the receiver's
 *   clock. The mac is compared in constant time.
 * - Mutual TLS with certificates from the cluster's CA, each naming its node (subject CN
 *   `brook-node-<id>`): the server asks every client for a certificate, and each side checks that the
 *   other's names the node it expects (the client: the peer it dialled; the server: the caller the
 *   call names). TLS also keeps the traffic private and unaltered, which the secret alone does not.
 *
 * Then the caller must belong to this node's cluster: every call names the caller's cluster id
 * (`x-brook-cluster`, once it founded or joined one), and a call naming another cluster than this
 * node's is refused. Nodes of two clusters share a secret or a CA when an operator set them up
 * alike; a peer address that points at a node of another cluster (a stale or mistyped peer list)
 * would otherwise mix its Raft traffic into this cluster's groups: the node ids match, the groups
 * are numbered alike. A call without the key (a node that has no cluster id yet, asking Identify
 * before it founds or joins one, or a node of an older version) is taken as before, and Identify is
 * never refused for it: its answer is how a node learns the other's cluster.
 * Then the caller must be a member (`isMember`). A call that fails is refused with UNAUTHENTICATED
 * (no valid proof) or PERMISSION_DENIED (another cluster, or a proven node that is not a member).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { NodeId } from '../raft/index.js';
import { decodeU64 } from './codec.js';
import type { TransportLogger } from './types.js';

/** What a node proves itself with. At least one of the two; 'insecure' (local testing only): neither. */
export interface ClusterCredentials {
  /** The shared cluster secret (at least 16 bytes; 32 random bytes recommended). */
  readonly secret?: Buffer;
  /** Mutual TLS: this node's certificate chain and key (PEM), and the cluster CA (PEM) every peer's chains to. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer };
}
export type TransportSecurity = ClusterCredentials | 'insecure';

/** The metadata key naming the calling node on every call. */
export const fromKey = 'x-brook-from';
/** The metadata key carrying the proof of the cluster secret. */
export const authKey = 'x-brook-auth';
/** The metadata key naming the calling node's cluster id (absent while it has none). */
export const clusterKey = 'x-brook-cluster';
/** How far a proof's time may be from the receiver's clock (either way). */
export const proofAgeMsMax = 60_000;
/**
 * Nonces remembered (those of proofs still fresh), about 10 MB at most; beyond it (more than ~1,600
 * calls a second for a minute), proofs not newer than the last forgotten one are refused.
 */
const noncesMaxDefault = 100_000;
const secretBytesMin = 16;
const macBytes = 32;

export function certificateName(id: NodeId): string {
  return `brook-node-${id}`;
}

/** The node a certificate names (subject CN `brook-node-<id>`), if any. */
export function nodeIdOfCertificate(cert: Pick<PeerCertificate, 'subject'> | undefined): NodeId | undefined {
  const cn = cert?.subject?.CN;
  const m = typeof cn === 'string' ? /^brook-node-([1-9]\d{0,9})$/.exec(cn) : null;
  return m === null ? undefined : Number(m[1]);
}

function mac(secret: Buffer, from: NodeId, to: NodeId, path: string, ms: number, nonce: string): Buffer {
  return createHmac('sha256', secret).update(`brook-node-auth/v1\n${from}\n${to}\n${path}\n${ms}\n${nonce}`).digest();
}

/** The proof a call from `from` to `to` on `path` carries. */
export function proveCall(secret: Buffer, from: NodeId, to: NodeId, path: string, nowMs: number, nonce = randomBytes(12).toString('base64url')): string {
  return `v1.${nowMs}.${nonce}.${mac(secret, from, to, path, nowMs, nonce).toString('base64url')}`;
}

export type Verdict =
  | { readonly ok: true; readonly from: NodeId }
  | { readonly ok: false; readonly code: grpc.status; readonly details: string; readonly otherCluster?: true };

export interface CallAuthenticatorOptions {
  readonly self: NodeId;
  readonly security: TransportSecurity;
  readonly isMember: (id: NodeId) => boolean;
  /** This node's cluster id, read at every call ('' while it has none: nothing is refused for it). */
  readonly clusterId?: () => string;
  readonly logger: TransportLogger;
  readonly nowMs?: () => number;
  /** Nonces remembered at most (tests make it small). */
  readonly noncesMax?: number;
}

/** The server's check of every call. */
export class CallAuthenticator {
  readonly #o: CallAuthenticatorOptions;
  readonly #nowMs: () => number;
  /** Nonces of fresh proofs already used, and the same in the order they were seen with their times. */
  readonly #nonces = new Set<string>();
  #order: string[] = [];
  #orderMs: number[] = [];
  #head = 0;
  /** Proofs at or before this time are refused: their nonces may have been forgotten. */
  #floorMs = -Infinity;
  #refused = 0;
  #otherClusterCalls = 0;

  constructor(o: CallAuthenticatorOptions) {
    if (o.security !== 'insecure' && o.security.secret !== undefined && o.security.secret.length < secretBytesMin) {
      throw new Error(`the cluster secret must hold at least ${secretBytesMin} bytes`);
    }
    this.#o = o;
    this.#nowMs = o.nowMs ?? Date.now;
  }

  refusedCalls(): number {
    return this.#refused;
  }

  check(metadata: grpc.Metadata, path: string, peerCertificate: PeerCertificate | undefined): Verdict {
    const unauthenticated = (details: string): Verdict => ({ ok: false, code: grpc.status.UNAUTHENTICATED, details });
    const fromValues = metadata.get(fromKey);
    if (fromValues.length !== 1) return unauthenticated(`${fromKey}: the call names no calling node`);
    let from: NodeId;
    try {
      from = decodeU64(fromValues[0], fromKey);
    } catch {
      return unauthenticated(`${fromKey}: not a node id`);
    }
    if (from === 0 || from === this.#o.self) return unauthenticated(`${fromKey}: ${from} is not a peer`);
    const sec = this.#o.security;
    if (sec !== 'insecure') {
      if (sec.tls !== undefined) {
        const named = nodeIdOfCertificate(peerCertificate);
        if (named === undefined) return unauthenticated('the client certificate names no node (subject CN brook-node-<id>)');
        if (named !== from) return unauthenticated(`the client certificate names node ${named}, the call node ${from}`);
      }
      if (sec.secret !== undefined) {
        const why = this.#checkProof(sec.secret, metadata, from, path);
        if (why !== undefined) return unauthenticated(why);
      }
    }
    const other = this.#otherCluster(metadata, from, path);
    if (other !== undefined) return { ok: false, code: grpc.status.PERMISSION_DENIED, details: other, otherCluster: true };
    if (!this.#o.isMember(from)) return { ok: false, code: grpc.status.PERMISSION_DENIED, details: `node ${from} is not a member of this cluster` };
    return { ok: true, from };
  }

  /** Why the call comes from a node of another cluster, or undefined (see the header). */
  #otherCluster(metadata: grpc.Metadata, from: NodeId, path: string): string | undefined {
    if (path.endsWith('/Identify')) return undefined;
    const ours = this.#o.clusterId?.() ?? '';
    const values = metadata.get(clusterKey);
    if (ours === '' || values.length === 0) return undefined;
    // Shown in the log line: bounded, since anything that holds the secret can put anything there.
    const theirs = values.length === 1 && typeof values[0] === 'string' ? values[0].slice(0, 64) : '(malformed)';
    if (theirs === ours) return undefined;
    this.#otherClusterCalls++;
    return `node ${from} belongs to cluster ${theirs}, this node to cluster ${ours}: a peer address points at a node of another cluster (is the peer list right?)`;
  }

  /** Calls refused as coming from a node of another cluster. */
  otherClusterCalls(): number {
    return this.#otherClusterCalls;
  }

  #checkProof(secret: Buffer, metadata: grpc.Metadata, from: NodeId, path: string): string | undefined {
    const values = metadata.get(authKey);
    if (values.length !== 1 || typeof values[0] !== 'string') return `${authKey}: no proof of the cluster secret`;
    const parts = values[0].split('.');
    if (parts.length !== 4 || parts[0] !== 'v1' || !/^\d{1,15}$/.test(parts[1]!) || !/^[A-Za-z0-9_-]{8,64}$/.test(parts[2]!)) return `${authKey}: malformed proof`;
    const ms = Number(parts[1]);
    const nonce = parts[2]!;
    const given = Buffer.from(parts[3]!, 'base64url');
    const now = this.#nowMs();
    if (Math.abs(now - ms) > proofAgeMsMax) return `${authKey}: proof made ${Math.round((now - ms) / 1000)} s from this node's clock (clocks apart?)`;
    const expected = mac(secret, from, this.#o.self, path, ms, nonce);
    if (given.length !== macBytes || !timingSafeEqual(given, expected)) return `${authKey}: wrong proof (another cluster secret?)`;
    // Only a proof with a good mac reaches the nonce memory, so strangers cannot fill it.
    if (ms <= this.#floorMs || this.#nonces.has(nonce)) return `${authKey}: proof already used`;
    this.#remember(nonce, ms, now);
    return undefined;
  }

  /** Remembers a used nonce and forgets those too old to matter (or too many), oldest first. */
  #remember(nonce: string, ms: number, now: number): void {
    this.#nonces.add(nonce);
    this.#order.push(nonce);
    this.#orderMs.push(ms);
    while (this.#head < this.#order.length && (this.#nonces.size > (this.#o.noncesMax ?? noncesMaxDefault) || this.#orderMs[this.#head]! < now - proofAgeMsMax)) {
      this.#nonces.delete(this.#order[this.#head]!);
      this.#floorMs = Math.max(this.#floorMs, this.#orderMs[this.#head]!);
      this.#head++;
    }
    if (this.#head > 4096 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#orderMs = this.#orderMs.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Logs a refusal: the first few, then every hundredth (a scanner must not flood the log). */
  logRefusal(v: Exclude<Verdict, { ok: true }>, path: string, peer: string): void {
    this.#refused++;
    if (this.#refused <= 10 || this.#refused % 100 === 0) {
      const msg = v.otherCluster === true ? 'refused a node-to-node call from a node of another cluster: check the peer list' : 'refused a node-to-node call';
      this.#o.logger.warn({ peer, path, code: v.code, detail: v.details, refused: this.#refused }, msg);
    }
  }
}

/** Refuses, before any handler runs, every call that the authenticator does not accept. */
export function authInterceptor(auth: CallAuthenticator): grpc.ServerInterceptor {
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, mdNext) => {
            const v = auth.check(metadata, method.path, call.getAuthContext().sslPeerCertificate);
            if (v.ok) {
              mdNext(metadata);
              return;
            }
            auth.logRefusal(v, method.path, call.getPeer());
            call.sendStatus({ code: v.code, details: v.details });
          },
        }),
    });
}

/**
 * Names this node on every call to `to`, with a proof of the secret when there is one, and its cluster
 * id once it has one (read at each call: a stream opened later names the cluster the node joined).
 */
export function identityInterceptor(self: NodeId, to: NodeId, security: TransportSecurity, nowMs: () => number = Date.now, clusterId: () => string = () => ''): grpc.Interceptor {
  const secret = security === 'insecure' ? undefined : security.secret;
  const from = String(self);
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(fromKey, from);
        const cluster = clusterId();
        if (cluster !== '') metadata.set(clusterKey, cluster);
        if (secret !== undefined) metadata.set(authKey, proveCall(secret, self, to, options.method_definition.path, nowMs()));
        next(metadata, listener);
      },
    });
}

export function serverCredentials(security: TransportSecurity): grpc.ServerCredentials {
  const tls = security === 'insecure' ? undefined : security.tls;
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  // true: a client without a certificate from the cluster CA does not get past the handshake.
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/**
 * Channel options for dialling peer `to`: with TLS the server name sent is the name its certificate
 * must carry (an IP address as server name is not allowed by RFC 6066, and peers are often dialled by
 * address).
 */
export function channelSecurityOptions(security: TransportSecurity, to: NodeId): grpc.ChannelOptions {
  return security !== 'insecure' && security.tls !== undefined ? { 'grpc.ssl_target_name_override': certificateName(to) } : {};
}

/** The credentials for dialling peer `to`: with TLS, its certificate must name it (host names are not checked). */
export function channelCredentials(security: TransportSecurity, to: NodeId): grpc.ChannelCredentials {
  const tls = security === 'insecure' ? undefined : security.tls;
  if (tls === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert, {
    checkServerIdentity: (_host, cert) => {
      const named = nodeIdOfCertificate(cert);
      return named === to ? undefined : new Error(`the certificate of the peer dialled as node ${to} names ${named === undefined ? 'no node' : `node ${named}`}`);
    },
  });
}
