// Goal: the zstd request decoder (issue 10) decodes what the reference encoder writes and what the
// format allows (raw and RLE blocks, several frames, skippable frames, input split anywhere), and
// refuses hostile bodies before they cost memory: output beyond the limit (413 after at most the limit
// plus one block), a declared content size beyond it (413 before decoding), a window above 8 MiB (415,
// RFC 9659), dictionaries (415), truncated or garbage input (400).
// Method: the decoder as a stream, fed in chunks of every size; fixtures from zstd-frames.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Problem } from '../core/problem.js';
import { ZstdDecoder } from './zstd-decoder.js';
import { zstdFixture, zstdFixtureText, zstdFrameDeclaring, zstdFrameWithWindow, zstdRawFrame, zstdRleBomb } from '../testing/zstd-frames.js';
/** Runs `input` through a decoder in chunks of `chunk` bytes; resolves to the output or the error. */
function decode(input, limit, chunk = input.length || 1) {
    return new Promise((resolve) => {
        const d = new ZstdDecoder(limit);
        const parts = [];
        let produced = 0;
        d.on('data', (b) => {
            parts.push(b);
            produced += b.length;
        });
        d.on('end', () => resolve({ out: Buffer.concat(parts), produced }));
        d.on('error', (err) => resolve({ err, produced }));
        for (let at = 0; at < input.length; at += chunk)
            d.write(input.subarray(at, at + chunk));
        d.end();
    });
}
function assertProblem(r, status, includes) {
    assert.ok('err' in r, 'decoding fails');
    assert.ok(r.err instanceof Problem, `a Problem, got ${String(r.err)}`);
    assert.equal(r.err.status, status);
    assert.ok(String(r.err.detail).includes(includes), `detail "${r.err.detail}" names "${includes}"`);
}
test('decodes the reference encoder\'s output (compressed block, content checksum), in any chunking', async () => {
    for (const chunk of [1, 2, 3, 7, 18, 64, zstdFixture.length]) {
        const r = await decode(zstdFixture, 1_000_000, chunk);
        assert.ok('out' in r, `chunk ${chunk}: ${'err' in r ? String(r.err) : ''}`);
        assert.equal(r.out.toString(), zstdFixtureText);
    }
});
test('decodes raw frames, several frames one after another, and skips skippable frames', async () => {
    const skippable = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0]), Buffer.from('xyz')]);
    const body = Buffer.concat([zstdRawFrame(Buffer.from('[{"a":')), skippable, zstdFixture, zstdRawFrame(Buffer.from('}]'))]);
    const r = await decode(body, 1_000_000, 5);
    assert.ok('out' in r);
    assert.equal(r.out.toString(), '[{"a":' + zstdFixtureText + '}]');
});
test('property: any data in raw frames decodes to itself, split at any points', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 300_000 }), fc.integer({ min: 1, max: 70_000 }), async (data, chunk) => {
        const r = await decode(zstdRawFrame(Buffer.from(data)), 1_000_000, chunk);
        assert.ok('out' in r);
        assert.deepEqual(new Uint8Array(r.out), data);
    }), { numRuns: 30, seed: 10 });
});
test('a bomb (8,192 RLE blocks: 32 KiB that regenerate 1 GiB) fails with 413 having produced at most the limit', async () => {
    const bomb = zstdRleBomb(8192);
    assert.ok(bomb.length < 40_000);
    const limit = 1_000_000;
    const r = await decode(bomb, limit);
    assertProblem(r, 413, `${limit}`);
    assert.ok(r.produced <= limit, `produced ${r.produced}`);
});
test('a declared content size above the limit is refused (413) before anything is decoded', async () => {
    const r = await decode(zstdFrameDeclaring(2 ** 40), 1_000_000);
    assertProblem(r, 413, '1099511627776');
    assert.equal(r.produced, 0);
});
test('a window above 8 MiB (here 1 GiB, which the decoder would allocate at once) is refused with 415 (RFC 9659); 8 MiB itself is accepted', async () => {
    assertProblem(await decode(zstdFrameWithWindow(30), 1_000_000), 415, 'window');
    const ok = await decode(zstdFrameWithWindow(23), 1_000_000);
    assert.ok('out' in ok);
    assert.equal(ok.out.toString(), '[]');
});
test('frames that need a dictionary are refused with 415', async () => {
    const withDictionary = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x38, 0x07]), Buffer.from([0x05, 0, 0, 0])]);
    assertProblem(await decode(withDictionary, 1_000_000), 415, 'dictionary');
});
test('garbage, a truncated frame and a reserved block type are 400', async () => {
    assertProblem(await decode(Buffer.from('[{"not":"zstd"}]'), 1_000_000), 400, 'zstd');
    assertProblem(await decode(zstdFixture.subarray(0, 100), 1_000_000), 400, 'zstd');
    const reservedBlock = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]), Buffer.from([0x07, 0, 0])]);
    assertProblem(await decode(reservedBlock, 1_000_000), 400, 'reserved');
});
//# sourceMappingURL=zstd-decoder.test.js.map