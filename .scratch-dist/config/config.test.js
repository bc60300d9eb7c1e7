// Goal: configuration precedence (defaults < file < env < flags) and clear errors for bad values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, loggableConfig, readClusterSecurity } from './config.js';
test('defaults: port 8080 and ./data', () => {
    const c = loadConfig({}, []);
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, './data');
    assert.ok(Object.isFrozen(c));
});
test('BROOK_PORT and BROOK_DATA_DIR are honoured, flags win over env, env over file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ port: 1111, logLevel: 'warn' }));
    const c = loadConfig({ BROOK_PORT: '2222', BROOK_DATA_DIR: '/tmp/x', BROOK_CONFIG: file }, ['--data-dir', '/tmp/y']);
    assert.equal(c.port, 2222);
    assert.equal(c.dataDir, '/tmp/y');
    assert.equal(c.logLevel, 'warn');
});
test('bad values stop the start with a message naming the setting', () => {
    assert.throws(() => loadConfig({ BROOK_PORT: 'eighty' }, []), (e) => e instanceof ConfigError && /BROOK_PORT/.test(e.message));
    assert.throws(() => loadConfig({ BROOK_PORT: '70000' }, []), (e) => e instanceof ConfigError && /port/.test(e.message));
    assert.throws(() => loadConfig({}, ['--no-such-flag', '1']), /unknown flag --no-such-flag/);
    assert.throws(() => loadConfig({ BROOK_LOG_LEVEL: 'loud' }, []), /logLevel/);
    assert.throws(() => loadConfig({ BROOK_PARTITIONS_DEFAULT: '5', BROOK_PARTITIONS_MAX: '2' }, []), /partitionsDefault/);
});
test('peers: "<id>=<host>:<raftPort>/<httpPort>" lists, validated; empty is a cluster of one', async () => {
    const { parsePeers } = await import('./config.js');
    assert.deepEqual(parsePeers(''), []);
    assert.deepEqual(parsePeers('1=127.0.0.1:9081/8081, 2=node-2.local:9082,3=[::1]:9083/8083'), [
        { id: 1, host: '127.0.0.1', raftPort: 9081, httpPort: 8081 },
        { id: 2, host: 'node-2.local', raftPort: 9082, httpPort: undefined },
        { id: 3, host: '[::1]', raftPort: 9083, httpPort: 8083 },
    ]);
    const c = loadConfig({ BROOK_NODE_ID: '2', BROOK_PEERS: '1=127.0.0.1:9081/8081,2=127.0.0.1:9082/8082', BROOK_INSECURE_CLUSTER: 'true' }, ['--raft-port', '9082']);
    assert.equal(c.nodeId, 2);
    assert.equal(c.raftPort, 9082);
    for (const bad of ['1=127.0.0.1', '0=h:1', 'x=h:1', '1=h:1,1=h:2', '1=h:1,2=h:1', '1=h:70000', '1=h:1/0', '1 = h:1']) {
        assert.throws(() => loadConfig({ BROOK_PEERS: bad }, []), (e) => e instanceof ConfigError && /peers/.test(e.message), bad);
    }
    assert.throws(() => loadConfig({ BROOK_RAFT_HEARTBEAT_TICKS: '10', BROOK_RAFT_ELECTION_TICKS: '10' }, []), /raftHeartbeatTicks/);
    assert.throws(() => loadConfig({ BROOK_NODE_ID: 'node-1' }, []), /BROOK_NODE_ID/);
});
test('authentication settings: BROOK_AUTH, BROOK_ADMIN_CLIENT_ID, BROOK_AUTH_TOKENS_FILE; the file may say oauth2.adminClientId; each mode needs its source', () => {
    const c = loadConfig({ BROOK_AUTH: 'static', BROOK_ADMIN_CLIENT_ID: 'ops', BROOK_AUTH_TOKENS_FILE: '/etc/brook/tokens.json' }, []);
    assert.deepEqual([c.auth, c.adminClientId, c.authTokensFile], ['static', 'ops', '/etc/brook/tokens.json']);
    assert.equal(loadConfig({}, []).auth, 'off');
    const dir = mkdtempSync(join(tmpdir(), 'brook-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ 'oauth2.adminClientId': 'root-app', eventTypeDeletionAdminOnly: true }));
    const f = loadConfig({ BROOK_CONFIG: file }, []);
    assert.equal(f.adminClientId, 'root-app');
    assert.equal(f.eventTypeDeletionAdminOnly, true);
    assert.equal(loadConfig({ BROOK_EVENT_TYPE_DELETION_ADMIN_ONLY: 'true' }, []).eventTypeDeletionAdminOnly, true);
    assert.throws(() => loadConfig({ BROOK_EVENT_TYPE_DELETION_ADMIN_ONLY: 'yes' }, []), /true or false/);
    assert.throws(() => loadConfig({ BROOK_AUTH: 'static' }, []), /authTokensFile/);
    assert.throws(() => loadConfig({ BROOK_AUTH: 'tokeninfo' }, []), /authTokenInfoUrl/);
    assert.throws(() => loadConfig({ BROOK_AUTH: 'jwt' }, []), /authJwksUrl/);
    assert.throws(() => loadConfig({ BROOK_AUTH: 'magic' }, []), /auth/);
});
test('node-to-node credentials: a node with peers needs a cluster secret or mutual TLS, or says it is insecure', () => {
    const peers = { BROOK_NODE_ID: '1', BROOK_PEERS: '1=127.0.0.1:9081,2=127.0.0.1:9082' };
    assert.throws(() => loadConfig(peers, []), (e) => e instanceof ConfigError && /no node-to-node credentials/.test(e.message) && /BROOK_CLUSTER_SECRET_FILE/.test(e.message) && /BROOK_INSECURE_CLUSTER=true/.test(e.message));
    // A cluster of one (itself only) needs nothing.
    assert.equal(loadConfig({ BROOK_NODE_ID: '1', BROOK_PEERS: '1=127.0.0.1:9081' }, []).insecureCluster, false);
    assert.equal(readClusterSecurity(loadConfig({ ...peers, BROOK_INSECURE_CLUSTER: 'true' }, [])), 'insecure');
    const secret = 'f'.repeat(64);
    const c = loadConfig({ ...peers, BROOK_CLUSTER_SECRET: secret }, []);
    assert.deepEqual(readClusterSecurity(c), { secret: Buffer.from(secret) });
    assert.equal(loggableConfig(c).clusterSecret, '[redacted]');
    assert.ok(!JSON.stringify(loggableConfig(c)).includes(secret));
    assert.throws(() => loadConfig({ ...peers, BROOK_CLUSTER_SECRET: 'short' }, []), /at least 32/);
    assert.throws(() => loadConfig({ ...peers, BROOK_CLUSTER_SECRET: secret, BROOK_CLUSTER_SECRET_FILE: '/x' }, []), /both set/);
    assert.throws(() => loadConfig({ ...peers, BROOK_TLS_CERT: '/c.pem', BROOK_TLS_KEY: '/k.pem' }, []), /all of tlsCert, tlsKey and tlsCa/);
});
test('node-to-node credentials are read from their files at start; a missing, short or non-PEM file stops it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-config-'));
    const peers = { BROOK_NODE_ID: '1', BROOK_PEERS: '1=127.0.0.1:9081,2=127.0.0.1:9082' };
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, 'a'.repeat(64) + '\n');
    assert.deepEqual(readClusterSecurity(loadConfig({ ...peers, BROOK_CLUSTER_SECRET_FILE: secretFile }, [])), { secret: Buffer.from('a'.repeat(64)) });
    writeFileSync(join(dir, 'short'), 'abc\n');
    assert.throws(() => readClusterSecurity(loadConfig({ ...peers, BROOK_CLUSTER_SECRET_FILE: join(dir, 'short') }, [])), (e) => e instanceof ConfigError && /at least 32/.test(e.message));
    assert.throws(() => readClusterSecurity(loadConfig({ ...peers, BROOK_CLUSTER_SECRET_FILE: join(dir, 'missing') }, [])), (e) => e instanceof ConfigError && /cannot read/.test(e.message));
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const key = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n';
    writeFileSync(join(dir, 'cert.pem'), cert);
    writeFileSync(join(dir, 'key.pem'), key);
    const tls = { BROOK_TLS_CERT: join(dir, 'cert.pem'), BROOK_TLS_KEY: join(dir, 'key.pem'), BROOK_TLS_CA: join(dir, 'cert.pem') };
    assert.deepEqual(readClusterSecurity(loadConfig({ ...peers, ...tls }, [])), { tls: { cert: Buffer.from(cert), key: Buffer.from(key), ca: Buffer.from(cert) } });
    assert.throws(() => readClusterSecurity(loadConfig({ ...peers, ...tls, BROOK_TLS_KEY: join(dir, 'cert.pem') }, [])), /tlsKey .* not a PEM file/);
});
test('replicationFactor: 0 (min(3, members)) by default, a number of replicas up to 7 when set', () => {
    assert.equal(loadConfig({}, []).replicationFactor, 0);
    assert.equal(loadConfig({ BROOK_REPLICATION_FACTOR: '5' }, []).replicationFactor, 5);
    assert.equal(loadConfig({}, ['--replication-factor', '1']).replicationFactor, 1);
    assert.throws(() => loadConfig({ BROOK_REPLICATION_FACTOR: '8' }, []), /replicationFactor/);
    assert.throws(() => loadConfig({ BROOK_REPLICATION_FACTOR: '-1' }, []), /replicationFactor/);
});
//# sourceMappingURL=config.test.js.map