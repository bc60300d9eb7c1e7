/**
 * Authentication plug-ins (issue 5; compatibility.md, "Authentication"): the bearer token of
 * `Authorization: Bearer <token>` becomes a Principal, or the request gets a 401 Problem.
 *
 * - off: every caller is the administrator (development default).
 * - static: a JSON file {"tokens":{"<token>":{"uid","type","scopes":[...]}}}, read at start.
 * - tokeninfo: GET <url> with the token (as `Authorization: Bearer` and `access_token` query), answer
 *   the original service's {"uid","scope":[...],"realm"?} or RFC 7662's {"active","sub"|"client_id"|
 *   "username","scope":"a b"}; good answers are cached for a short time (never longer than expires_in).
 *   A 4xx answer means the token is invalid (401); the token-info service failing or unreachable is 503,
 *   so clients do not throw away a good token because of an outage.
 * - jwt: the token is a JWT verified (signature, exp/nbf, and issuer/audience when configured) with the
 *   jose library against a JWKS URL (keys fetched and cached by jose) or one public key (PEM or JWK).
 *   uid from a claim (default sub), scopes from `scope` (space-separated) or `scp` (array), the kind of
 *   subject from a claim (default `type`, else "user"). A JWKS that cannot be had is 503, like token-info.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { problems } from '../core/problem.js';
import type { Principal } from './principal.js';

export interface Authenticator {
  /** The principal of a request from its Authorization header; throws a 401 (or 503) Problem. */
  authenticate(authorization: string | undefined): Promise<Principal>;
  /**
   * The principal when it is known without waiting for anything (no authentication, a token file, a
   * cached answer), else undefined (then `authenticate` is asked); throws the 401 Problem
   * `authenticate` would reject with. Spares every request of the common case a promise and a
   * resumption.
   */
  known?(authorization: string | undefined): Principal | undefined;
}

/** Longest token accepted; longer ones are refused without contacting anyone. */
export const tokenLengthMax = 8192;

export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') throw problems.unauthorized('No bearer token: send "Authorization: Bearer <token>"');
  const m = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header);
  if (m === null) throw problems.unauthorized('The Authorization header must be "Bearer <token>"');
  const token = m[1]!;
  if (token.length > tokenLengthMax) throw problems.unauthorized(`The bearer token is longer than ${tokenLengthMax} characters`);
  return token;
}

function principal(uid: string, type: string, scopes: Iterable<string>, adminClientId: string): Principal {
  return { uid, type, scopes: new Set(scopes), admin: uid === adminClientId };
}

export class OffAuthenticator implements Authenticator {
  readonly #admin: Principal;
  constructor(adminClientId: string) {
    this.#admin = { uid: adminClientId, type: 'user', scopes: new Set(), admin: true };
  }
  authenticate(): Promise<Principal> {
    return Promise.resolve(this.#admin);
  }

  known(): Principal {
    return this.#admin;
  }
}

interface StaticEntry {
  uid: string;
  type: string;
  scopes: string[];
}

export class StaticTokenAuthenticator implements Authenticator {
  readonly #tokens = new Map<string, StaticEntry>();
  readonly #adminClientId: string;

  /** Parses and checks the token file's content; throws an Error naming what is wrong. */
  constructor(fileContent: string, adminClientId: string) {
    this.#adminClientId = adminClientId;
    let parsed: unknown;
    try {
      parsed = JSON.parse(fileContent);
    } catch (err) {
      throw new Error(`the token file is not JSON: ${(err as Error).message}`);
    }
    const tokens = (parsed as { tokens?: unknown } | null)?.tokens;
    if (typeof tokens !== 'object' || tokens === null || Array.isArray(tokens)) throw new Error('the token file must hold {"tokens":{"<token>":{...}}}');
    for (const [token, e] of Object.entries(tokens as Record<string, unknown>)) {
      const entry = e as Partial<StaticEntry> | null;
      if (typeof entry?.uid !== 'string' || entry.uid === '') throw new Error(`token file: the entry of a token has no uid`);
      if (entry.scopes !== undefined && !(Array.isArray(entry.scopes) && entry.scopes.every((s) => typeof s === 'string'))) {
        throw new Error(`token file: scopes of uid ${entry.uid} must be an array of strings`);
      }
      if (entry.type !== undefined && (typeof entry.type !== 'string' || entry.type === '')) throw new Error(`token file: type of uid ${entry.uid} must be a non-empty string`);
      this.#tokens.set(token, { uid: entry.uid, type: entry.type ?? 'user', scopes: entry.scopes ?? [] });
    }
  }

  static fromFile(path: string, adminClientId: string): StaticTokenAuthenticator {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the token file ${path}: ${(err as Error).message}`);
    }
    return new StaticTokenAuthenticator(text, adminClientId);
  }

  authenticate(header: string | undefined): Promise<Principal> {
    try {
      return Promise.resolve(this.known(header));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  known(header: string | undefined): Principal {
    const token = bearerToken(header);
    const e = this.#tokens.get(token);
    if (e === undefined) throw problems.unauthorized('The bearer token is not valid');
    return principal(e.uid, e.type, e.scopes, this.#adminClientId);
  }
}

export interface TokenInfoOptions {
  url: string;
  adminClientId: string;
  cacheMs: number;
  timeoutMs: number;
  /** Wall-clock ms (the cache's expiry). */
  nowMs: () => number;
}

/** Most cached tokens; the oldest entry goes first beyond it. */
const tokenCacheEntriesMax = 10_000;

export class TokenInfoAuthenticator implements Authenticator {
  readonly #o: TokenInfoOptions;
  readonly #cache = new Map<string, { p: Principal; expiresAtMs: number }>();

  constructor(o: TokenInfoOptions) {
    this.#o = o;
  }

  known(header: string | undefined): Principal | undefined {
    const hit = this.#cache.get(bearerToken(header));
    return hit !== undefined && hit.expiresAtMs > this.#o.nowMs() ? hit.p : undefined;
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    const now = this.#o.nowMs();
    const hit = this.#cache.get(token);
    if (hit !== undefined && hit.expiresAtMs > now) return hit.p;
    if (hit !== undefined) this.#cache.delete(token);

    const url = new URL(this.#o.url);
    url.searchParams.set('access_token', token);
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, signal: AbortSignal.timeout(this.#o.timeoutMs) });
    } catch (err) {
      throw problems.unavailable(`The token-info service could not be reached: ${(err as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    // 408 and 429 say the service is busy, not that the token is bad: the client must not drop it.
    if (res.status === 408 || res.status === 429) throw problems.unavailable(`The token-info service answered ${res.status}`);
    if (res.status >= 400 && res.status < 500) throw problems.unauthorized('The bearer token is not valid (token-info refused it)');
    if (!res.ok) throw problems.unavailable(`The token-info service answered ${res.status}`);
    let info: Record<string, unknown>;
    try {
      info = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw problems.unavailable('The token-info service answered something that is not JSON');
    }
    if (typeof info !== 'object' || info === null) throw problems.unavailable('The token-info service answered something that is not an object');
    if (info['active'] === false) throw problems.unauthorized('The bearer token is not active');
    const uid = [info['uid'], info['sub'], info['username'], info['client_id']].find((v): v is string => typeof v === 'string' && v !== '');
    if (uid === undefined) throw problems.unauthorized('The token-info answer names no uid');
    const scope = info['scope'];
    const scopes = Array.isArray(scope) ? scope.filter((s): s is string => typeof s === 'string') : typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [];
    const p = principal(uid, typeOf(info), scopes, this.#o.adminClientId);
    // A cached answer never outlives the token: the original token-info's expires_in (seconds from now)
    // or RFC 7662's exp (seconds since the epoch).
    const expiresIn = typeof info['expires_in'] === 'number' ? info['expires_in'] * 1000 : Infinity;
    const untilExp = typeof info['exp'] === 'number' ? info['exp'] * 1000 - now : Infinity;
    const ttl = Math.min(this.#o.cacheMs, expiresIn, untilExp);
    if (ttl > 0) {
      if (this.#cache.size >= tokenCacheEntriesMax) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(token, { p, expiresAtMs: now + ttl });
    }
    return p;
  }
}

/** The kind of subject of a token-info answer: its `type`, else from the realm ("/services" -> service), else user. */
function typeOf(info: Record<string, unknown>): string {
  if (typeof info['type'] === 'string' && info['type'] !== '') return info['type'];
  const realm = info['realm'];
  if (realm === '/services') return 'service';
  return 'user';
}

export interface JwtOptions {
  /** JWKS URL, or empty when `key` is given. */
  jwksUrl: string;
  /** A public key: PEM text, JWK JSON, or a path to a file holding either. */
  key: string;
  issuer: string;
  audience: string;
  uidClaim: string;
  typeClaim: string;
  adminClientId: string;
}

export class JwtAuthenticator implements Authenticator {
  readonly #o: JwtOptions;
  readonly #key: KeyObject | JWTVerifyGetKey;

  constructor(o: JwtOptions) {
    this.#o = o;
    if (o.jwksUrl !== '') this.#key = createRemoteJWKSet(new URL(o.jwksUrl));
    else if (o.key !== '') this.#key = loadKey(o.key);
    else throw new Error('jwt authentication needs authJwksUrl or authJwtKey');
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    let payload: JWTPayload;
    try {
      const opts: { issuer?: string; audience?: string } = {};
      if (this.#o.issuer !== '') opts.issuer = this.#o.issuer;
      if (this.#o.audience !== '') opts.audience = this.#o.audience;
      ({ payload } = await jwtVerify(token, this.#key as KeyObject, opts));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw problems.unauthorized('The bearer token has expired');
      if (jwksUnavailable(err)) throw problems.unavailable('The JWKS could not be fetched or is not a valid key set');
      if (err instanceof joseErrors.JOSEError) throw problems.unauthorized(`The bearer token is not valid (${err.code})`);
      throw problems.unauthorized('The bearer token is not valid');
    }
    const uid = payload[this.#o.uidClaim];
    if (typeof uid !== 'string' || uid === '') throw problems.unauthorized(`The token has no "${this.#o.uidClaim}" claim`);
    const scope = payload['scope'];
    const scp = payload['scp'];
    const scopes = typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : Array.isArray(scp) ? scp.filter((s): s is string => typeof s === 'string') : [];
    const type = payload[this.#o.typeClaim];
    return principal(uid, typeof type === 'string' && type !== '' ? type : 'user', scopes, this.#o.adminClientId);
  }
}

/**
 * Whether verification failed because the JWKS could not be had (unreachable, timed out, not 200, not
 * JSON, not a key set): an outage of the key service is 503 like a token-info outage, not the token's
 * fault. jose raises the plain JOSEError (no subclass) only while fetching the remote set, and
 * JWKSInvalid only for the set's content; verification failures have their own subclasses.
 */
function jwksUnavailable(err: unknown): boolean {
  if (err instanceof TypeError && /fetch/i.test(err.message)) return true;
  return err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid || (err instanceof joseErrors.JOSEError && err.code === joseErrors.JOSEError.code);
}

function loadKey(spec: string): KeyObject {
  const text = spec.trimStart().startsWith('{') || spec.includes('-----BEGIN') ? spec : readFileSync(spec, 'utf8');
  if (text.trimStart().startsWith('{')) return createPublicKey({ key: JSON.parse(text) as import('node:crypto').JsonWebKey, format: 'jwk' });
  return createPublicKey(text);
}
