/**
 * Brook's configuration: one typed, validated, frozen object built at start from, in increasing
 * precedence, defaults, an optional JSON file (--config / BROOK_CONFIG), BROOK_* environment variables
 * and command-line flags. Nothing else in src/ reads process.env or argv. A bad value stops the start
 * with a message naming the setting and what is allowed.
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { nodeIdMax } from '../core/member-id.js';
import { eventTypesMaxDefault, metadataBytesMaxDefault, metadataBytesMaxMax, publishBodyBytesMax, publishBodyBytesMin, schemaVersionsMaxDefault, subscriptionsMaxDefault, timelinesMaxDefault } from '../core/limits.js';

export const ConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, description: 'address the HTTP API listens on' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'HTTP port' }),
    dataDir: Type.String({ minLength: 1, description: 'directory of the embedded RocksDB' }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    ),
    nodeId: Type.Integer({ minimum: 1, maximum: nodeIdMax, description: 'this node\'s id in the cluster (Raft member id), in every log line' }),
    raftPort: Type.Integer({ minimum: 0, maximum: 65535, description: 'port of the Raft (gRPC) listener; used only when peers are configured' }),
    advertiseHost: Type.String({ maxLength: 253, description: 'host other nodes reach this node at; empty: host, or 127.0.0.1 when host is a wildcard' }),
    peers: Type.String({ maxLength: 65_536, description: 'initial cluster members: "<id>=<host>:<raftPort>/<httpPort>,..." (may list this node too); empty: a cluster of one' }),
    raftTickMs: Type.Integer({ minimum: 1, maximum: 10_000, description: 'length of one Raft tick' }),
    raftElectionTicks: Type.Integer({ minimum: 2, maximum: 10_000, description: 'ticks without a leader before a follower campaigns (randomized up to twice that)' }),
    raftHeartbeatTicks: Type.Integer({ minimum: 1, maximum: 10_000, description: 'ticks between leader heartbeats' }),
    raftSnapshotEntries: Type.Integer({ minimum: 4, maximum: 100_000_000, description: 'applied metadata entries between snapshots (log compaction)' }),
    partitionMemoryEntries: Type.Integer({ minimum: 16, maximum: 1_000_000, description: 'Raft entries of a partition kept in memory (followers further behind than 16 times this fetch the log)' }),
    metadataTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, description: 'how long a metadata write or linearizable read may wait for the leader before 503' }),
    partitionsDefault: Type.Integer({ minimum: 1, maximum: 100 }),
    // Seven voters already survive three failures; larger groups only slow every write down.
    replicationFactor: Type.Integer({ minimum: 0, maximum: 7, description: 'replicas of each new partition (clamped to the cluster members); 0: min(3, members)' }),
    partitionsMax: Type.Integer({ minimum: 1, maximum: 100 }),
    subscriptionPartitionsMax: Type.Integer({ minimum: 1, maximum: 100_000, description: 'most partitions (summed over its event types) one subscription may cover' }),
    retentionTimeMsDefault: Type.Integer({ minimum: 60_000 }),
    retentionTimeMsMin: Type.Integer({ minimum: 0 }),
    retentionTimeMsMax: Type.Integer({ minimum: 60_000 }),
    retentionCheckIntervalMs: Type.Integer({ minimum: 10, maximum: 86_400_000 }),
    lowLevelConnectionsPerPartitionMax: Type.Integer({ minimum: 1, maximum: 10_000 }),
    eventTypesMax: Type.Integer({ minimum: 1, maximum: 100_000, description: 'most event types in the cluster (422 above)' }),
    subscriptionsMax: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'most subscriptions in the cluster (422 above)' }),
    schemaVersionsMax: Type.Integer({ minimum: 1, maximum: 10_000, description: 'most schema versions one event type collects; a schema change beyond them is refused (422)' }),
    timelinesMax: Type.Integer({ minimum: 1, maximum: 1000, description: 'most timelines one event type has, its first included; a timeline switch beyond them is refused (422). Timelines are never removed' }),
    metadataBytesMax: Type.Integer({ minimum: 1024 * 1024, maximum: metadataBytesMaxMax, description: 'bytes of every event type (all schema versions) and subscription together (422 above); the metadata snapshot must fit one 64 MiB message between nodes' }),
    publishBodyBytesMax: Type.Integer({ minimum: publishBodyBytesMin, maximum: publishBodyBytesMax, description: 'largest publish request body, after decoding (413 above); at least one event of the largest size (999,000 bytes) must fit' }),
    httpRequestTimeoutMs: Type.Integer({ minimum: 1000, maximum: 600_000, description: 'headers and body of a request must arrive within this (408 after); streams are not cut: their request is complete once its headers arrived' }),
    httpBodyIdleTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, description: 'a request body that sends nothing for this long gets 408 at once' }),
    schemaBytesMax: Type.Integer({ minimum: 1024, maximum: 8 * 1024 * 1024, description: 'largest schema text (schema.schema, UTF-8 bytes) of an event type' }),
    schemaDepthMax: Type.Integer({ minimum: 4, maximum: 200, description: 'deepest nesting of objects and arrays in a schema (the root object is 1)' }),
    schemaObjectsMax: Type.Integer({ minimum: 16, maximum: 1000, description: 'most objects and arrays in one schema (its subschemas and keywords holding several); ajv compiles a schema into one function of nested blocks, and from about 1,400 properties V8 cannot run it (stack overflow)' }),
    schemaEnumValuesMax: Type.Integer({ minimum: 1, maximum: 100_000, description: 'most values in one enum of a schema' }),
    tailCacheBytesMax: Type.Integer({ minimum: 0 }),
    shutdownGraceMs: Type.Integer({ minimum: 0, maximum: 600_000 }),
    auth: Type.Union(['off', 'static', 'tokeninfo', 'jwt'].map((l) => Type.Literal(l)), { description: 'authentication: off (every caller is the administrator), static (token file), tokeninfo (URL), jwt (JWKS URL or key)' }),
    adminClientId: Type.String({ minLength: 1, maxLength: 1024, description: 'uid of the administrator (svc.oauth2.adminClientId; file key also "oauth2.adminClientId")' }),
    authTokensFile: Type.String({ description: 'static: JSON file {"tokens":{"<token>":{"uid","type","scopes":[...]}}}' }),
    authTokenInfoUrl: Type.String({ description: 'tokeninfo: URL answering {"uid","scope":[...]} for a bearer token' }),
    authTokenInfoCacheMs: Type.Integer({ minimum: 0, maximum: 3_600_000, description: 'tokeninfo: how long a good answer is reused' }),
    authTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000, description: 'tokeninfo: how long to wait for the token-info service before 503' }),
    authJwksUrl: Type.String({ description: 'jwt: JWKS URL of the token issuer' }),
    authJwtKey: Type.String({ description: 'jwt: a public key instead of a JWKS (PEM or JWK JSON, or a file path holding either)' }),
    authJwtIssuer: Type.String({ description: 'jwt: required iss (empty: not checked)' }),
    authJwtAudience: Type.String({ description: 'jwt: required aud (empty: not checked)' }),
    authJwtUidClaim: Type.String({ minLength: 1, description: 'jwt: claim holding the uid' }),
    authJwtTypeClaim: Type.String({ minLength: 1, description: 'jwt: claim holding the kind of subject (user, service); absent: user' }),
    authScopePrefix: Type.String({ maxLength: 100, description: 'prefix of scope names (svc.event_stream.read ...)' }),
    eventTypeDeletionAdminOnly: Type.Boolean({ description: 'deleting event types needs the administrator' }),
    processMetrics: Type.Boolean({ description: "prom-client's Node process metrics (GC, event loop lag, heap spaces); they cost some publish latency tail" }),
    // Node-to-node authentication (docs/security.md): a node with peers needs a cluster secret, mutual
    // TLS, or both; checked by checkClusterSecurity() below, read by readClusterSecurity().
    clusterSecret: Type.String({ maxLength: 4096, description: 'secret shared by every node, proven on every node-to-node call (at least 32 characters); prefer clusterSecretFile' }),
    clusterSecretFile: Type.String({ description: 'file holding the cluster secret (e.g. `openssl rand -hex 32`)' }),
    tlsCert: Type.String({ description: 'mutual TLS between nodes: this node\'s certificate chain (PEM file); its subject CN must be brook-node-<nodeId>' }),
    tlsKey: Type.String({ description: 'mutual TLS between nodes: this node\'s private key (PEM file)' }),
    tlsCa: Type.String({ description: 'mutual TLS between nodes: the cluster CA every node\'s certificate is signed by (PEM file)' }),
    insecureCluster: Type.Boolean({ description: 'run a node with peers without node-to-node credentials: for local testing only, anyone who reaches the Raft port can change metadata' }),
    acceptMetadataLoss: Type.Boolean({ description: "LOSES DATA: a single node whose metadata raft log is damaged starts with what it holds instead of refusing to start (docs/metadata-raft.md); set for one start only" }),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;

export const defaults: Static<typeof ConfigSchema> = {
  host: '0.0.0.0',
  port: 8080,
  dataDir: './data',
  logLevel: 'info',
  nodeId: 1,
  raftPort: 9080,
  advertiseHost: '',
  peers: '',
  raftTickMs: 100,
  raftElectionTicks: 10,
  raftHeartbeatTicks: 1,
  raftSnapshotEntries: 4096,
  partitionMemoryEntries: 1024,
  metadataTimeoutMs: 5000,
  partitionsDefault: 1,
  replicationFactor: 0,
  partitionsMax: 100,
  subscriptionPartitionsMax: 100,
  retentionTimeMsDefault: 345_600_000,
  retentionTimeMsMin: 0,
  retentionTimeMsMax: 30 * 24 * 3600 * 1000,
  retentionCheckIntervalMs: 60_000,
  lowLevelConnectionsPerPartitionMax: 5,
  eventTypesMax: eventTypesMaxDefault,
  subscriptionsMax: subscriptionsMaxDefault,
  schemaVersionsMax: schemaVersionsMaxDefault,
  timelinesMax: timelinesMaxDefault,
  metadataBytesMax: metadataBytesMaxDefault,
  publishBodyBytesMax: 4 * 1024 * 1024,
  httpRequestTimeoutMs: 30_000,
  httpBodyIdleTimeoutMs: 10_000,
  schemaBytesMax: 1_000_000,
  schemaDepthMax: 50,
  schemaObjectsMax: 1000,
  schemaEnumValuesMax: 10_000,
  tailCacheBytesMax: 64 * 1024 * 1024,
  shutdownGraceMs: 10_000,
  auth: 'off',
  adminClientId: 'brook-admin',
  authTokensFile: '',
  authTokenInfoUrl: '',
  authTokenInfoCacheMs: 30_000,
  authTimeoutMs: 3000,
  authJwksUrl: '',
  authJwtKey: '',
  authJwtIssuer: '',
  authJwtAudience: '',
  authJwtUidClaim: 'sub',
  authJwtTypeClaim: 'type',
  authScopePrefix: 'svc.',
  eventTypeDeletionAdminOnly: false,
  processMetrics: false,
  clusterSecret: '',
  clusterSecretFile: '',
  tlsCert: '',
  tlsKey: '',
  tlsCa: '',
  insecureCluster: false,
  acceptMetadataLoss: false,
};

/** Other names a config file may use for a setting (the original service's property names). */
const fileAliases: Record<string, Key> = { 'oauth2.adminClientId': 'adminClientId', 'svc.oauth2.adminClientId': 'adminClientId' };

type Key = keyof typeof defaults;

/** BROOK_DATA_DIR <-> dataDir, --data-dir <-> dataDir. */
function envName(key: string): string {
  return 'BROOK_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
}
function flagName(key: string): string {
  return '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function coerce(key: Key, raw: string, source: string): unknown {
  const kind = typeof defaults[key];
  if (kind === 'boolean') {
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw new ConfigError(`${source}: "${raw}" is not true or false`);
  }
  if (kind === 'number') {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${source}: "${raw}" is not an integer`);
    return Number(raw);
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): Config {
  const merged: Record<string, unknown> = { ...defaults };
  const keys = Object.keys(defaults) as Key[];

  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) flags.set(arg.slice(0, eq), arg.slice(eq + 1));
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`flag ${arg} needs a value`);
      flags.set(arg, next);
      i++;
    }
  }
  const known = new Set([...keys.map(flagName), '--config']);
  for (const f of flags.keys()) {
    if (!known.has(f)) throw new ConfigError(`unknown flag ${f}; known flags: ${[...known].join(', ')}`);
  }

  const file = flags.get('--config') ?? env['BROOK_CONFIG'];
  if (file !== undefined && file !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`config file ${file}: must hold a JSON object`);
    }
    for (const [name, v] of Object.entries(parsed)) {
      const k = fileAliases[name] ?? name;
      if (!(k in defaults)) throw new ConfigError(`config file ${file}: unknown setting "${name}"`);
      merged[k] = v;
    }
  }
  for (const key of keys) {
    const raw = env[envName(key)];
    if (raw !== undefined && raw !== '') merged[key] = coerce(key, raw, envName(key));
  }
  for (const key of keys) {
    const raw = flags.get(flagName(key));
    if (raw !== undefined) merged[key] = coerce(key, raw, flagName(key));
  }

  const errors = [...Value.Errors(ConfigSchema, merged)];
  if (errors.length > 0) {
    const lines = errors.map((e) => {
      const key = e.path.replace(/^\//, '');
      return `${key} (${envName(key)}, ${flagName(key)}): ${e.message}, got ${JSON.stringify(e.value)}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const cfg = merged as Static<typeof ConfigSchema>;
  if (cfg.partitionsDefault > cfg.partitionsMax) {
    throw new ConfigError(`partitionsDefault (${cfg.partitionsDefault}) must not exceed partitionsMax (${cfg.partitionsMax})`);
  }
  if (cfg.raftHeartbeatTicks >= cfg.raftElectionTicks) {
    throw new ConfigError(`raftHeartbeatTicks (${cfg.raftHeartbeatTicks}) must be below raftElectionTicks (${cfg.raftElectionTicks})`);
  }
  parsePeers(cfg.peers);
  if (cfg.retentionTimeMsDefault < cfg.retentionTimeMsMin || cfg.retentionTimeMsDefault > cfg.retentionTimeMsMax) {
    throw new ConfigError(`retentionTimeMsDefault must lie within [retentionTimeMsMin, retentionTimeMsMax]`);
  }
  if (cfg.auth === 'static' && cfg.authTokensFile === '') throw new ConfigError('auth=static needs authTokensFile (BROOK_AUTH_TOKENS_FILE)');
  if (cfg.auth === 'tokeninfo' && cfg.authTokenInfoUrl === '') throw new ConfigError('auth=tokeninfo needs authTokenInfoUrl (BROOK_AUTH_TOKEN_INFO_URL)');
  if (cfg.auth === 'jwt' && cfg.authJwksUrl === '' && cfg.authJwtKey === '') throw new ConfigError('auth=jwt needs authJwksUrl (BROOK_AUTH_JWKS_URL) or authJwtKey (BROOK_AUTH_JWT_KEY)');
  checkClusterSecurity(cfg);
  return Object.freeze(cfg);
}

// ---------------------------------------------------------------------------------------------
// Node-to-node authentication

/** The shortest cluster secret accepted (`openssl rand -hex 32` gives 64 characters). */
export const clusterSecretLengthMin = 32;

/**
 * A node with peers must be able to prove itself to them and check them: a cluster secret, mutual TLS
 * (all three files), or both; without either it refuses to start unless insecureCluster says so.
 */
function checkClusterSecurity(cfg: Static<typeof ConfigSchema>): void {
  if (cfg.clusterSecret !== '' && cfg.clusterSecretFile !== '') {
    throw new ConfigError('clusterSecret (BROOK_CLUSTER_SECRET) and clusterSecretFile (BROOK_CLUSTER_SECRET_FILE) are both set; set one');
  }
  if (cfg.clusterSecret !== '' && cfg.clusterSecret.length < clusterSecretLengthMin) {
    throw new ConfigError(`clusterSecret (BROOK_CLUSTER_SECRET) must hold at least ${clusterSecretLengthMin} characters, e.g. \`openssl rand -hex 32\``);
  }
  const tls = [cfg.tlsCert, cfg.tlsKey, cfg.tlsCa].filter((f) => f !== '').length;
  if (tls !== 0 && tls !== 3) throw new ConfigError('mutual TLS needs all of tlsCert, tlsKey and tlsCa (BROOK_TLS_CERT, BROOK_TLS_KEY, BROOK_TLS_CA)');
  const hasPeers = parsePeers(cfg.peers).some((p) => p.id !== cfg.nodeId);
  const hasCredentials = cfg.clusterSecret !== '' || cfg.clusterSecretFile !== '' || tls === 3;
  if (hasPeers && !hasCredentials && !cfg.insecureCluster) {
    throw new ConfigError(
      'this node has peers but no node-to-node credentials: anyone who reaches its Raft port could change metadata and read events. ' +
        'Set BROOK_CLUSTER_SECRET_FILE to a file holding a secret shared by every node (`openssl rand -hex 32 > cluster-secret`), ' +
        'and/or BROOK_TLS_CERT, BROOK_TLS_KEY and BROOK_TLS_CA for mutual TLS (docs/security.md). ' +
        'BROOK_INSECURE_CLUSTER=true runs without them, for local testing only.',
    );
  }
}

/** What the node-to-node transport authenticates with (src/transport's TransportSecurity). */
export type ClusterSecurity = 'insecure' | { readonly secret?: Buffer; readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer } };

function readSetting(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${what}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Reads the cluster secret and TLS files named by the configuration; a missing or malformed one stops the start. */
export function readClusterSecurity(cfg: Config): ClusterSecurity {
  let secret: Buffer | undefined;
  if (cfg.clusterSecret !== '') secret = Buffer.from(cfg.clusterSecret, 'utf8');
  if (cfg.clusterSecretFile !== '') {
    // A trailing newline (echo, an editor) is not part of the secret.
    const text = readSetting(cfg.clusterSecretFile, 'clusterSecretFile (BROOK_CLUSTER_SECRET_FILE)').toString('utf8').replace(/\r?\n$/, '');
    if (text.length < clusterSecretLengthMin) {
      throw new ConfigError(`clusterSecretFile (BROOK_CLUSTER_SECRET_FILE): ${cfg.clusterSecretFile} must hold at least ${clusterSecretLengthMin} characters, e.g. \`openssl rand -hex 32\``);
    }
    secret = Buffer.from(text, 'utf8');
  }
  let tls: { cert: Buffer; key: Buffer; ca: Buffer } | undefined;
  if (cfg.tlsCert !== '') {
    const pem = (file: string, what: string, kind: RegExp) => {
      const b = readSetting(file, what);
      if (!kind.test(b.toString('latin1'))) throw new ConfigError(`${what}: ${file} is not a PEM file of the expected kind`);
      return b;
    };
    tls = {
      cert: pem(cfg.tlsCert, 'tlsCert (BROOK_TLS_CERT)', /-----BEGIN CERTIFICATE-----/),
      key: pem(cfg.tlsKey, 'tlsKey (BROOK_TLS_KEY)', /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
      ca: pem(cfg.tlsCa, 'tlsCa (BROOK_TLS_CA)', /-----BEGIN CERTIFICATE-----/),
    };
  }
  if (secret === undefined && tls === undefined) return 'insecure';
  return { ...(secret === undefined ? {} : { secret }), ...(tls === undefined ? {} : { tls }) };
}

/** The configuration as it may be logged: the cluster secret's value left out. */
export function loggableConfig(cfg: Config): Config {
  return cfg.clusterSecret === '' ? cfg : { ...cfg, clusterSecret: '[redacted]' };
}

/** The documentation table of settings (used by README generation and --help). */
export function describeSettings(): { key: string; env: string; flag: string; default: unknown }[] {
  return (Object.keys(defaults) as Key[]).map((key) => ({
    key,
    env: envName(key),
    flag: flagName(key),
    default: defaults[key],
  }));
}

/** One initial member of the cluster, as given in `peers`. */
export interface PeerSpec {
  readonly id: number;
  readonly host: string;
  readonly raftPort: number;
  /** The member's HTTP port, if given (shown by GET /cluster; used to reach its API). */
  readonly httpPort: number | undefined;
}

const peerRe = /^(\d{1,10})=(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})(?:\/(\d{1,5}))?$/;

/**
 * Parses the peers setting: comma-separated `<id>=<host>:<raftPort>/<httpPort>` (the `/<httpPort>`
 * part is optional; an IPv6 host is written in brackets), e.g.
 * `1=127.0.0.1:9081/8081,2=127.0.0.1:9082/8082,3=127.0.0.1:9083/8083`. Every founding member is given
 * the same list; it may include the node itself. Empty: a cluster of one.
 */
export function parsePeers(text: string): PeerSpec[] {
  const out: PeerSpec[] = [];
  const trimmed = text.trim();
  if (trimmed === '') return out;
  for (const raw of trimmed.split(',')) {
    const item = raw.trim();
    const m = peerRe.exec(item);
    if (m === null) {
      throw new ConfigError(`peers (BROOK_PEERS, --peers): "${item}" is not <id>=<host>:<raftPort>[/<httpPort>], e.g. 2=127.0.0.1:9082/8082`);
    }
    const id = Number(m[1]);
    const raftPort = Number(m[3]);
    const httpPort = m[4] === undefined ? undefined : Number(m[4]);
    if (id < 1 || id > nodeIdMax) throw new ConfigError(`peers: node id ${m[1]} must be within [1, 2147483647]`);
    if (raftPort < 1 || raftPort > 65535) throw new ConfigError(`peers: Raft port ${raftPort} of node ${id} is not a port`);
    if (httpPort !== undefined && (httpPort < 1 || httpPort > 65535)) throw new ConfigError(`peers: HTTP port ${httpPort} of node ${id} is not a port`);
    if (out.some((p) => p.id === id)) throw new ConfigError(`peers: node id ${id} is listed twice`);
    const host = m[2]!;
    if (out.some((p) => p.host === host && p.raftPort === raftPort)) throw new ConfigError(`peers: ${host}:${raftPort} is listed twice`);
    out.push({ id, host, raftPort, httpPort });
  }
  return out;
}

/** The host other nodes use to reach this one. */
export function advertisedHost(config: Config): string {
  if (config.advertiseHost !== '') return config.advertiseHost;
  return config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
}
