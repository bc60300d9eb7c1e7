// Goal: keep the layout of DESIGN.md true as the code grows (in the spirit of TigerBeetle's tidy.zig).
// Method: parse every import specifier under src/ and check the dependency rules below; any arrow that
// points the wrong way, any pure core that reaches for I/O, a clock or randomness, and any read of
// process.env outside config/ and the composition root fails the build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Tests run from dist/, the sources sit in src/ beside it.
const srcRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = walk(srcRoot).map((abs) => {
  const rel = relative(srcRoot, abs).split(sep).join('/');
  const text = readFileSync(abs, 'utf8');
  const imports = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return { rel, folder: rel.includes('/') ? rel.split('/')[0]! : '', text, imports, isTest: rel.endsWith('.test.ts') };
});

function target(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const rel = relative(srcRoot, resolve(srcRoot, dirname(from), spec)).split(sep).join('/');
  return rel.includes('/') ? rel.split('/')[0] : '';
}

/** Folders each folder may import (besides itself). '' is the top level (main.ts). */
const allowed: Record<string, string[]> = {
  core: [],
  raft: ['core'],
  replication: ['core'],
  metadata: ['core'],
  registry: ['core', 'metadata'],
  publishing: ['core', 'metadata'],
  consumption: ['core', 'metadata'],
  settings: ['core', 'metadata'],
  subscriptions: ['core', 'metadata'],
  log: ['core'],
  transport: ['core', 'raft'],
  config: ['core'],
  observability: ['core'],
  auth: ['core', 'metadata', 'config'],
  api: ['core', 'metadata', 'registry', 'publishing', 'consumption', 'settings', 'subscriptions', 'observability', 'auth'],
  broker: ['core', 'metadata', 'log', 'replication', 'registry', 'publishing', 'consumption', 'observability', 'raft', 'config', 'transport', 'settings', 'subscriptions'],
  // The simulator runs the production node host and partition replicas (broker) over simulated disks
  // (log's KV port and in-memory map) and plays the transport (its group-handler types), so that the
  // code it checks is the code that ships; it stays test-only (never imported by non-test code,
  // checked below). Its consumers run the production stream drivers and cursor tools (consumption)
  // and create their subscription as the HTTP layer does (subscriptions).
  sim: ['core', 'raft', 'metadata', 'replication', 'log', 'broker', 'transport', 'consumption', 'subscriptions'],
  // The command-line tool is an HTTP client: it shares nothing with the broker but the core.
  cli: ['core'],
  testing: ['*'],
  '': ['*'],
};

/** Pure cores: no I/O, no clock, no randomness. */
const pure = new Set(['core', 'raft', 'replication', 'metadata', 'registry', 'publishing', 'settings', 'subscriptions']);
const pureFiles = new Set(['auth/principal.ts', 'auth/permissions.ts', 'auth/resource-access.ts', 'consumption/batcher.ts', 'consumption/stream-params.ts', 'consumption/cursors.ts', 'consumption/batch-line.ts']);
const ioModules = /^(node:)?(fs|net|http|https|dgram|child_process|worker_threads|fs\/promises|crypto|timers|perf_hooks)$|^@grpc\/|^rocksdb-native|^fastify|^undici|^pino/;

test('every file is in a known folder', () => {
  for (const f of files) assert.ok(f.folder in allowed, `${f.rel}: unknown folder "${f.folder}"; add it to the rules`);
});

test('imports point only to allowed folders', () => {
  for (const f of files) {
    if (f.isTest) continue;
    const ok = allowed[f.folder] ?? [];
    for (const spec of f.imports) {
      const t = target(f.rel, spec);
      if (t === undefined || t === f.folder || ok.includes('*')) continue;
      assert.ok(ok.includes(t), `${f.rel} imports ${spec} (folder ${t || 'top level'}), which ${f.folder} may not use`);
    }
  }
});

test('test-only code (sim, testing) is imported only by tests', () => {
  for (const f of files) {
    if (f.isTest || f.folder === 'sim' || f.folder === 'testing') continue;
    for (const spec of f.imports) {
      const t = target(f.rel, spec);
      assert.ok(t !== 'sim' && t !== 'testing', `${f.rel} imports test-only ${spec}`);
    }
  }
});

test('pure cores use no I/O, no clock and no randomness', () => {
  for (const f of files) {
    if (f.isTest || !(pure.has(f.folder) || pureFiles.has(f.rel))) continue;
    for (const spec of f.imports) assert.ok(!ioModules.test(spec), `${f.rel} (pure) imports ${spec}`);
    const code = f.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const banned of ['Date.now(', 'Math.random(', 'performance.now(', 'setTimeout(', 'setInterval(', 'process.hrtime']) {
      assert.ok(!code.includes(banned), `${f.rel} (pure) calls ${banned}`);
    }
  }
});

test('only config/ and the composition root read the environment', () => {
  for (const f of files) {
    if (f.isTest || ['config', '', 'testing', 'sim', 'cli'].includes(f.folder)) continue;
    assert.ok(!/process\.env|process\.argv/.test(f.text), `${f.rel} reads process.env/argv; take it from Config`);
  }
});

test('only transport/ touches gRPC', () => {
  for (const f of files) {
    if (f.isTest || f.folder === 'transport') continue;
    for (const spec of f.imports) assert.ok(!spec.startsWith('@grpc/'), `${f.rel} imports ${spec}; gRPC belongs in transport/`);
  }
});
