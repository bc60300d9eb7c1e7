// Goal: configuration precedence (defaults < file < env < flags) and clear errors for bad values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';

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
  assert.throws(() => loadConfig({ BROOK_PORT: 'eighty' }, []), (e: Error) => e instanceof ConfigError && /BROOK_PORT/.test(e.message));
  assert.throws(() => loadConfig({ BROOK_PORT: '70000' }, []), (e: Error) => e instanceof ConfigError && /port/.test(e.message));
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
  const c = loadConfig({ BROOK_NODE_ID: '2', BROOK_PEERS: '1=127.0.0.1:9081/8081,2=127.0.0.1:9082/8082' }, ['--raft-port', '9082']);
  assert.equal(c.nodeId, 2);
  assert.equal(c.raftPort, 9082);
  for (const bad of ['1=127.0.0.1', '0=h:1', 'x=h:1', '1=h:1,1=h:2', '1=h:1,2=h:1', '1=h:70000', '1=h:1/0', '1 = h:1']) {
    assert.throws(() => loadConfig({ BROOK_PEERS: bad }, []), (e: Error) => e instanceof ConfigError && /peers/.test(e.message), bad);
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

test('replicationFactor: 0 (min(3, members)) by default, a number of replicas up to 7 when set', () => {
  assert.equal(loadConfig({}, []).replicationFactor, 0);
  assert.equal(loadConfig({ BROOK_REPLICATION_FACTOR: '5' }, []).replicationFactor, 5);
  assert.equal(loadConfig({}, ['--replication-factor', '1']).replicationFactor, 1);
  assert.throws(() => loadConfig({ BROOK_REPLICATION_FACTOR: '8' }, []), /replicationFactor/);
  assert.throws(() => loadConfig({ BROOK_REPLICATION_FACTOR: '-1' }, []), /replicationFactor/);
});
