/**
 * Goal: schema versions follow semantic versioning (interface "Versioning": default 1.0.0, generated).
 * Method: examples for each bump level, then fast-check properties over arbitrary versions: a bump
 * always increases the version, major > minor > patch bumps of the same version, lower parts reset.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bumpVersion } from './index.js';
import { compareVersions, initialSchemaVersion, isSchemaVersion } from './semver.js';
const versionArb = fc
    .tuple(fc.nat({ max: 1_000_000 }), fc.nat({ max: 1_000_000 }), fc.nat({ max: 1_000_000 }))
    .map(([a, b, c]) => `${a}.${b}.${c}`);
const levelArb = fc.constantFrom('patch', 'minor', 'major');
describe('semantic versions', () => {
    test('versions start at 1.0.0', () => {
        assert.equal(initialSchemaVersion, '1.0.0');
    });
    test('patch, minor and major bumps reset the lower components', () => {
        assert.equal(bumpVersion('1.4.2', 'patch'), '1.4.3');
        assert.equal(bumpVersion('1.4.2', 'minor'), '1.5.0');
        assert.equal(bumpVersion('1.4.2', 'major'), '2.0.0');
        assert.equal(bumpVersion('1.9.0', 'minor'), '1.10.0');
    });
    test('versions order numerically, not as strings', () => {
        assert.ok(compareVersions('1.10.0', '1.9.0') > 0);
        assert.ok(compareVersions('2.0.0', '10.0.0') < 0);
        assert.equal(compareVersions('3.2.1', '3.2.1'), 0);
    });
    test('malformed versions are not schema versions', () => {
        for (const v of ['1.0', '1.0.0.0', '01.0.0', 'v1.0.0', '1.0.0-rc1', '', '1..0'])
            assert.equal(isSchemaVersion(v), false, v);
        assert.throws(() => bumpVersion('1.0', 'patch'));
    });
    test('property: every bump yields a greater, well-formed version', () => {
        fc.assert(fc.property(versionArb, levelArb, (v, level) => {
            const next = bumpVersion(v, level);
            return isSchemaVersion(next) && compareVersions(next, v) > 0;
        }));
    });
    test('property: for one version, major bump > minor bump > patch bump', () => {
        fc.assert(fc.property(versionArb, (v) => {
            const p = bumpVersion(v, 'patch');
            const m = bumpVersion(v, 'minor');
            const M = bumpVersion(v, 'major');
            return compareVersions(M, m) > 0 && compareVersions(m, p) > 0;
        }));
    });
    test('property: bumps are monotonic (v < w implies bump(v) <= bump(w) at the same level)', () => {
        fc.assert(fc.property(versionArb, versionArb, levelArb, (v, w, level) => {
            if (compareVersions(v, w) >= 0)
                return true;
            return compareVersions(bumpVersion(v, level), bumpVersion(w, level)) <= 0;
        }));
    });
});
//# sourceMappingURL=semver.test.js.map