import { constants, createGzip } from 'node:zlib';
export function responseSink(raw, abort) {
    return streamResponse(raw, abort, false).sink;
}
/** The headers a stream response adds for its encoding. */
export function streamEncodingHeaders(gzip) {
    return gzip ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {};
}
export function streamResponse(raw, abort, gzip) {
    raw.on('close', () => abort.abort());
    if (raw.destroyed)
        abort.abort();
    const signal = abort.signal;
    let target = raw;
    let write = (line) => raw.write(line);
    let end = () => {
        if (!raw.writableEnded)
            raw.end();
    };
    if (gzip) {
        const gz = createGzip();
        gz.pipe(raw);
        // A client gone: nothing will read gzip's output any more.
        raw.on('close', () => {
            gz.unpipe(raw);
            gz.destroy();
        });
        gz.on('error', () => abort.abort());
        target = gz;
        write = (line) => {
            if (gz.destroyed)
                return true;
            const more = gz.write(line);
            gz.flush(constants.Z_SYNC_FLUSH);
            return more;
        };
        end = () => {
            if (gz.destroyed || gz.writableEnded) {
                if (!raw.writableEnded)
                    raw.end();
                return;
            }
            // pipe() ends the response once gzip has written its trailer.
            gz.end();
        };
    }
    const sink = {
        write,
        drain: () => new Promise((resolve) => {
            if (signal.aborted || raw.destroyed)
                return resolve();
            const done = () => {
                target.off('drain', done);
                raw.off('close', done);
                signal.removeEventListener('abort', done);
                resolve();
            };
            target.on('drain', done);
            raw.on('close', done);
            signal.addEventListener('abort', done, { once: true });
        }),
    };
    return { sink, end };
}
/**
 * Whether the client accepts a gzip response (RFC 9110 Accept-Encoding: `gzip`, `x-gzip` or `*`
 * with a q-value above 0, and gzip not refused explicitly).
 */
export function acceptsGzip(header) {
    if (header === undefined)
        return false;
    const text = Array.isArray(header) ? header.join(',') : header;
    let gzip;
    let any;
    for (const part of text.split(',')) {
        const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
        let q = 1;
        for (const p of params) {
            const m = /^q=([0-9.]+)$/.exec(p);
            if (m !== null)
                q = Number(m[1]);
        }
        if (Number.isNaN(q))
            continue;
        if (name === 'gzip' || name === 'x-gzip')
            gzip = q;
        else if (name === '*')
            any = q;
    }
    return (gzip ?? any ?? 0) > 0;
}
//# sourceMappingURL=stream-sink.js.map