/**
 * A zstd decoding stream for request bodies (Content-Encoding: zstd), over fzstd, a pure-JavaScript
 * decoder (docs/decisions.md says why). Node 20's zlib has no zstd.
 *
 * Bounded by construction: frame headers are checked before fzstd sees them (zstd-frame-guard.ts), and
 * the decoded bytes are counted as fzstd produces them, block by block (128 KiB at most each), so a
 * body that regenerates far more than `outputBytesMax` fails with 413 after at most that much output,
 * however little input asked for it (one RLE block header regenerates 128 KiB from 4 bytes).
 */
import { Transform } from 'node:stream';
import { Decompress } from 'fzstd';
import { isProblem, problems } from '../core/problem.js';
import { ZstdFrameGuard } from './zstd-frame-guard.js';
/** RFC 9659: a zstd content coding uses at most an 8 MiB window. */
export const zstdWindowBytesMax = 8 * 1024 * 1024;
export class ZstdDecoder extends Transform {
    #guard;
    #decoder;
    #outputBytesMax;
    #output = 0;
    constructor(outputBytesMax) {
        super();
        this.#outputBytesMax = outputBytesMax;
        this.#guard = new ZstdFrameGuard({ windowBytesMax: zstdWindowBytesMax, contentBytesMax: outputBytesMax });
        this.#decoder = new Decompress((data) => {
            if (data.length === 0)
                return;
            this.#output += data.length;
            if (this.#output > this.#outputBytesMax) {
                // Thrown out of fzstd's push(): decoding stops here, nothing more is produced.
                throw problems.payloadTooLarge(`The decoded request body is larger than ${this.#outputBytesMax} bytes`);
            }
            // fzstd hands out a fresh array per block (never a view of its window), so no copy is needed.
            this.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
        });
    }
    _transform(chunk, _encoding, done) {
        try {
            this.#guard.check(chunk);
            this.#decoder.push(chunk);
            done();
        }
        catch (err) {
            done(decodingProblem(err));
        }
    }
    _flush(done) {
        try {
            this.#guard.end();
            this.#decoder.push(new Uint8Array(0), true);
            done();
        }
        catch (err) {
            done(decodingProblem(err));
        }
    }
}
function decodingProblem(err) {
    if (isProblem(err))
        return err;
    return problems.badRequest(`Content-Encoding zstd: the body is not valid zstd data (${err instanceof Error ? err.message : String(err)})`);
}
//# sourceMappingURL=zstd-decoder.js.map