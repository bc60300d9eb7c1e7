import { DecodeError, decodeBounded, fromWireEntry, toWireEntry } from './codec.js';
import { decodeGroup } from './batch-codec.js';
import { indexMax, logChunkBytesDefault, logChunkBytesMax, logChunkEntriesMax, termMax } from './limits.js';
import { TransportError } from './types.js';
export function toWireFetchLogRequest(r) {
    return { group: r.group, from_index: String(r.fromIndex), to_index: String(r.toIndex), max_bytes: r.maxBytes };
}
/** The server's check of a fetch; maxBytes 0 means the default, larger than the bound is clamped. */
export function fromWireFetchLogRequest(w) {
    const fromIndex = decodeBounded(w.from_index, indexMax, 'fetch.from_index');
    const toIndex = decodeBounded(w.to_index, indexMax, 'fetch.to_index');
    if (fromIndex === 0)
        throw new DecodeError('fetch.from_index: 0 (the first index is 1)');
    if (toIndex < fromIndex)
        throw new DecodeError(`fetch.to_index: ${toIndex} below from_index ${fromIndex}`);
    const maxBytes = typeof w.max_bytes === 'number' && w.max_bytes > 0 ? Math.min(w.max_bytes, logChunkBytesMax) : logChunkBytesDefault;
    return { group: decodeGroup(w.group, 'fetch.group'), fromIndex, toIndex, maxBytes };
}
/**
 * The wire chunks of one handler chunk, whose entries must continue at `next` and stay within the
 * request: cut so each holds at most maxBytes of entry data (a single larger entry travels alone) and
 * at most logChunkEntriesMax entries. A handler that breaks the order ends the call (TransportError).
 */
export function toWireLogChunks(c, req, next) {
    const out = [];
    let run = [];
    let bytes = 0;
    let expect = next;
    for (const e of c.entries) {
        if (e.index !== expect || e.index > req.toIndex) {
            throw new TransportError('unavailable', `fetchLog produced index ${e.index}, expected ${expect} (to ${req.toIndex})`);
        }
        const size = e.data.byteLength;
        if (run.length > 0 && (bytes + size > req.maxBytes || run.length >= logChunkEntriesMax)) {
            out.push({ entries: run });
            run = [];
            bytes = 0;
        }
        run.push(toWireEntry(e));
        bytes += size;
        expect++;
    }
    if (run.length > 0)
        out.push({ entries: run });
    return out;
}
/** The client's check of one chunk of the fetch `req`, the next expected index being `next`. */
export function fromWireLogChunk(w, req, next) {
    if (!Array.isArray(w.entries) || w.entries.length === 0)
        throw new DecodeError('chunk.entries: none');
    if (w.entries.length > logChunkEntriesMax)
        throw new DecodeError(`chunk.entries: more than ${logChunkEntriesMax}`);
    let bytes = 0;
    let term = 0;
    const entries = w.entries.map((we, k) => {
        const e = fromWireEntry(we, `chunk.entries[${k}]`);
        if (e.term < term)
            throw new DecodeError(`chunk.entries[${k}].term: ${e.term} below the previous entry's ${term}`);
        term = e.term;
        if (e.index !== next + k)
            throw new DecodeError(`chunk.entries[${k}].index: ${e.index}, expected ${next + k}`);
        if (e.index > req.toIndex)
            throw new DecodeError(`chunk.entries[${k}].index: ${e.index} beyond ${req.toIndex}`);
        if (e.term === 0 || e.term > termMax)
            throw new DecodeError(`chunk.entries[${k}].term: ${e.term} outside [1, ${termMax}]`);
        bytes += e.data.byteLength;
        return e;
    });
    if (entries.length > 1 && bytes > req.maxBytes)
        throw new DecodeError(`chunk: ${bytes} bytes, more than the ${req.maxBytes} asked for`);
    return { entries };
}
//# sourceMappingURL=log-codec.js.map