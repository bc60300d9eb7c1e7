/**
 * Where a body stops being UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
 * JSON text is UTF-8 (RFC 8259), and events are stored and streamed as the producer sent them: an event
 * with invalid bytes would make every stream that carries it invalid too, so it is refused. Node's
 * isUtf8 answers the common case at memory speed; this finds the offending byte only when it says no.
 */
import { isUtf8 } from 'node:buffer';
/** The offset of the first byte that is not part of valid UTF-8, or -1 when the whole body is valid. */
export function firstInvalidUtf8(body) {
    if (isUtf8(body))
        return -1;
    let i = 0;
    const n = body.length;
    while (i < n) {
        const b = body[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        let need;
        let min;
        if (b >= 0xc2 && b <= 0xdf)
            [need, min] = [1, 0x80];
        else if (b >= 0xe0 && b <= 0xef)
            [need, min] = [2, 0x800];
        else if (b >= 0xf0 && b <= 0xf4)
            [need, min] = [3, 0x10000];
        else
            return i;
        let cp = b & (0x3f >> need);
        for (let k = 1; k <= need; k++) {
            const c = body[i + k];
            if (c === undefined || (c & 0xc0) !== 0x80)
                return i;
            cp = (cp << 6) | (c & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        i += need + 1;
    }
    return -1;
}
//# sourceMappingURL=utf8.js.map