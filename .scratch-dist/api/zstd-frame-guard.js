/**
 * Checks the frame headers of a zstd stream before the bytes reach the decoder (fzstd), so a small body
 * cannot make the decoder allocate memory it declares rather than sends.
 *
 * Why: fzstd allocates each frame's whole window when it reads the frame header: up to 2 GiB for a
 * window descriptor, or the declared content size of a single-segment frame (up to 2^64). A 20-byte body
 * could ask for that. This guard walks the frame structure (RFC 8878: magic, header, block headers,
 * checksum; skippable frames) and refuses, before any allocation:
 * - a window above `windowBytesMax` (RFC 9659: zstd content coding is limited to an 8 MiB window);
 * - a declared content size above `contentBytesMax` (the body limit: the body would be refused anyway);
 * - dictionaries (a content coding has no way to name one), reserved bits and block types.
 * It does not decode; the decoder still checks everything else.
 */
import { problems } from '../core/problem.js';
/** RFC 8878: a block regenerates at most 128 KiB. */
const blockBytesMax = 128 * 1024;
export class ZstdFrameGuard {
    #windowBytesMax;
    #contentBytesMax;
    #state = 'magic';
    /** Bytes of the field being collected (at most 14, a frame header). */
    #field = [];
    #need = 4;
    #skip = 0;
    /** Where to go once the skipped bytes are passed. */
    #afterSkip = 'magic';
    #descriptor = 0;
    #lastBlock = false;
    constructor(limits) {
        this.#windowBytesMax = limits.windowBytesMax;
        this.#contentBytesMax = limits.contentBytesMax;
    }
    /** Throws a Problem when the bytes so far are not an acceptable zstd stream. */
    check(chunk) {
        let i = 0;
        while (i < chunk.length) {
            if (this.#state === 'skip') {
                const n = Math.min(this.#skip, chunk.length - i);
                i += n;
                this.#skip -= n;
                if (this.#skip === 0)
                    this.#state = this.#afterSkip;
                continue;
            }
            this.#field.push(chunk[i]);
            i++;
            if (this.#field.length < this.#need)
                continue;
            const field = this.#field;
            this.#field = [];
            this.#onField(field);
        }
    }
    /** Throws when the stream ended inside a frame. */
    end() {
        if (this.#state !== 'magic' || this.#field.length > 0)
            throw invalid('the zstd body ends inside a frame');
    }
    #onField(f) {
        switch (this.#state) {
            case 'magic': {
                const magic = u32(f, 0);
                if (magic === 0xfd2fb528)
                    return this.#expect('descriptor', 1);
                if (magic >>> 4 === 0x184d2a5)
                    return this.#expect('skippableSize', 4);
                throw invalid('the body is not zstd data (no frame magic number)');
            }
            case 'skippableSize':
                return this.#skipThen(u32(f, 0), 'magic');
            case 'descriptor': {
                const d = f[0];
                this.#descriptor = d;
                if ((d & 0x08) !== 0)
                    throw invalid('a zstd frame header sets a reserved bit');
                if ((d & 0x03) !== 0)
                    throw unsupported('zstd frames that need a dictionary are not supported');
                const rest = (singleSegment(d) ? 0 : 1) + contentSizeBytes(d);
                if (rest === 0)
                    return this.#expect('blockHeader', 3);
                return this.#expect('frameHeader', rest);
            }
            case 'frameHeader': {
                const d = this.#descriptor;
                let at = 0;
                let window = 0;
                if (!singleSegment(d)) {
                    const wd = f[at++];
                    const base = 2 ** (10 + (wd >> 3));
                    window = base + (base / 8) * (wd & 7);
                }
                const sizeBytes = contentSizeBytes(d);
                let content;
                if (sizeBytes > 0) {
                    // Little-endian, up to 8 bytes: a double is exact up to 2^53 and only compared with limits far below.
                    content = 0;
                    for (let k = sizeBytes - 1; k >= 0; k--)
                        content = content * 256 + f[at + k];
                    if (sizeBytes === 2)
                        content += 256;
                }
                if (singleSegment(d))
                    window = content ?? 0;
                if (content !== undefined && content > this.#contentBytesMax) {
                    throw problems.payloadTooLarge(`The decoded request body would be ${content} bytes; at most ${this.#contentBytesMax} are accepted`);
                }
                if (window > this.#windowBytesMax) {
                    throw unsupported(`zstd frames with a window above ${this.#windowBytesMax} bytes are not supported (RFC 9659); this one needs ${window}`);
                }
                return this.#expect('blockHeader', 3);
            }
            case 'blockHeader': {
                const h = f[0] | (f[1] << 8) | (f[2] << 16);
                this.#lastBlock = (h & 1) === 1;
                const type = (h >> 1) & 3;
                const size = h >>> 3;
                if (type === 3)
                    throw invalid('a zstd block has the reserved block type');
                if (size > blockBytesMax)
                    throw invalid('a zstd block is larger than 128 KiB');
                const next = this.#lastBlock ? 'magic' : 'blockHeader';
                const checksum = this.#lastBlock && (this.#descriptor & 0x04) !== 0 ? 4 : 0;
                // An RLE block carries one byte however much it regenerates.
                return this.#skipThen((type === 1 ? 1 : size) + checksum, next);
            }
            case 'skip':
                return;
        }
    }
    #expect(state, bytes) {
        this.#state = state;
        this.#need = bytes;
    }
    #skipThen(bytes, next) {
        const need = next === 'magic' ? 4 : next === 'blockHeader' ? 3 : 1;
        if (bytes === 0)
            return this.#expect(next, need);
        this.#state = 'skip';
        this.#skip = bytes;
        this.#afterSkip = next;
        this.#need = need;
    }
}
function u32(f, at) {
    return (f[at] | (f[at + 1] << 8) | (f[at + 2] << 16) | (f[at + 3] << 24)) >>> 0;
}
function singleSegment(descriptor) {
    return (descriptor & 0x20) !== 0;
}
/** Frame_Content_Size field length: FCS flag 0 means 1 byte for single-segment frames, else none. */
function contentSizeBytes(descriptor) {
    const flag = descriptor >> 6;
    if (flag === 0)
        return singleSegment(descriptor) ? 1 : 0;
    return 2 ** flag;
}
function invalid(detail) {
    return problems.badRequest(`Content-Encoding zstd: ${detail}`);
}
function unsupported(detail) {
    return problems.unsupportedMediaType(`Content-Encoding zstd: ${detail}`);
}
//# sourceMappingURL=zstd-frame-guard.js.map