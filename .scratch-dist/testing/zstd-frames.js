/**
 * TEST-ONLY: zstd bodies for the request-decoding tests. Node 20 has no zstd compressor, so the tests use
 * (a) bytes captured from the reference zstd CLI (a compressed block with a content checksum), and
 * (b) frames built here from the format (RFC 8878) out of raw and RLE blocks, which every decoder must
 * accept: enough to send any body, a bomb, or a hostile header.
 */
/** `zstd -19 --check` (v1.5.4) of `zstdFixtureText`: 155 bytes holding a 355-byte batch of three events. */
export const zstdFixture = Buffer.from('KLUv/WRjAG0EAJJJHRiQuwGrWAC2fgpNN8oZKY9PS5sCotZ/KQEHqx0S4QNvkL3VqgYWVNhgaWoJcwX5LQNRlEVyaQlm3dXGidOl04h/jA+ETQL5WrNkvXKGq/xS6y9fuqyV/mqGKRnSpSufkMt22tv5JYFcLdJl/Lc8DBLfY5OQEQggcIPFA4iK70C2JAbgP5GT6hr8M/zVPGE=', 'base64');
export const zstdFixtureText = '[{"order_number":"Z-1","metadata":{"eid":"9f0c2a4e-3a51-4d4e-a0b2-1c2d3e4f5a6b","occurred_at":"2026-11-22T10:00:00Z"}},' +
    '{"order_number":"Z-2","metadata":{"eid":"1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9","occurred_at":"2026-11-22T10:00:01Z"}},' +
    '{"order_number":"Z-3","metadata":{"eid":"2b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9","occurred_at":"2026-11-22T10:00:01Z"}}]';
const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const blockBytesMax = 128 * 1024;
function blockHeader(last, type, size) {
    const h = (size << 3) | (type << 1) | (last ? 1 : 0);
    return Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]);
}
/** Window descriptor byte for a window of 2^log bytes. */
function windowDescriptor(log) {
    return (log - 10) << 3;
}
/** One frame of raw blocks holding `data` (128 KiB window, no checksum). */
export function zstdRawFrame(data) {
    const parts = [magic, Buffer.from([0x00, windowDescriptor(17)])];
    if (data.length === 0)
        parts.push(blockHeader(true, 0, 0));
    for (let at = 0; at < data.length; at += blockBytesMax) {
        const piece = data.subarray(at, at + blockBytesMax);
        parts.push(blockHeader(at + blockBytesMax >= data.length, 0, piece.length), piece);
    }
    return Buffer.concat(parts);
}
/** A frame of `blocks` RLE blocks of 128 KiB each (4 bytes per block on the wire): a decompression bomb. */
export function zstdRleBomb(blocks, byte = 0x20) {
    const parts = [magic, Buffer.from([0x00, windowDescriptor(17)])];
    for (let i = 0; i < blocks; i++)
        parts.push(blockHeader(i === blocks - 1, 1, blockBytesMax), Buffer.from([byte]));
    return Buffer.concat(parts);
}
/** A frame header declaring a window of 2^log bytes, followed by one tiny raw block. */
export function zstdFrameWithWindow(log) {
    return Buffer.concat([magic, Buffer.from([0x00, windowDescriptor(log)]), blockHeader(true, 0, 2), Buffer.from('[]')]);
}
/** A single-segment frame declaring `contentBytes` of content (8-byte size field) with one tiny block. */
export function zstdFrameDeclaring(contentBytes) {
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(contentBytes));
    return Buffer.concat([magic, Buffer.from([0xe0]), size, blockHeader(true, 0, 2), Buffer.from('[]')]);
}
//# sourceMappingURL=zstd-frames.js.map