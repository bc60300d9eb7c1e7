/**
 * Goal: every mutant of the catalog still applies to the sources as they are (its text occurs exactly
 * once), so the mutant run cannot quietly test nothing after a refactoring. Method: read each file
 * from src/ and count.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mutants } from './catalog.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('each mutant of the catalog applies exactly once to the current sources', () => {
  assert.ok(mutants.length >= 5);
  for (const m of mutants) {
    const text = readFileSync(join(root, m.file), 'utf8');
    const first = text.indexOf(m.find);
    assert.ok(first >= 0, `${m.name}: its text is not in ${m.file} any more; update the catalog`);
    assert.equal(text.indexOf(m.find, first + 1), -1, `${m.name}: its text occurs more than once in ${m.file}`);
    assert.notEqual(m.replace, m.find, `${m.name} changes nothing`);
    for (const t of m.tests ?? []) assert.ok(t.startsWith('src/') && t.endsWith('.test.ts') && existsSync(join(root, t)), `${m.name}: its test ${t} is not a test file under src/`);
  }
  assert.equal(new Set(mutants.map((m) => m.name)).size, mutants.length, 'mutant names are unique');
});
