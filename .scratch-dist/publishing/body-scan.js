/**
 * Finds the byte extent of each top-level element of a JSON array, so the 999,000-byte limit can be
 * measured "on the submitted batch text including whitespace" (interface.md). Only called when the
 * whole body is larger than the limit (otherwise no single event can exceed it), so the common path
 * pays nothing. Assumes the text is valid JSON (JSON.parse ran first); UTF-8 continuation bytes are
 * >= 0x80 and never collide with the ASCII structural characters scanned for.
 */
export function topLevelElementSizes(body) {
    const sizes = [];
    let i = 0;
    const n = body.length;
    while (i < n && body[i] !== 0x5b /* [ */)
        i++;
    i++;
    let depth = 0;
    let inString = false;
    let start = i;
    for (; i < n; i++) {
        const c = body[i];
        if (inString) {
            if (c === 0x5c /* \ */)
                i++;
            else if (c === 0x22 /* " */)
                inString = false;
            continue;
        }
        if (c === 0x22)
            inString = true;
        else if (c === 0x7b /* { */ || c === 0x5b /* [ */)
            depth++;
        else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
            if (depth === 0) {
                // The closing bracket of the array: the last element ends here (if there is one).
                if (hasContent(body, start, i))
                    sizes.push(i - start);
                break;
            }
            depth--;
        }
        else if (c === 0x2c /* , */ && depth === 0) {
            sizes.push(i - start);
            start = i + 1;
        }
    }
    return sizes;
}
function hasContent(body, from, to) {
    for (let j = from; j < to; j++) {
        const c = body[j];
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09)
            return true;
    }
    return false;
}
/** The index of the top-level element holding byte `offset` of the body, or -1 (same assumptions as above). */
export function topLevelElementAt(body, offset) {
    const sizes = topLevelElementSizes(body);
    let start = body.indexOf(0x5b /* [ */) + 1;
    for (let k = 0; k < sizes.length; k++) {
        if (offset >= start && offset < start + sizes[k])
            return k;
        start += sizes[k] + 1;
    }
    return -1;
}
//# sourceMappingURL=body-scan.js.map