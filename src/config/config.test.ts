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
