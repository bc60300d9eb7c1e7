/**
 * The command-line tool's HTTP client: one node's URL and an optional bearer token. Every error
 * answer becomes a CliError carrying the Problem's detail (or the 422/207 items of a publish), so
 * the tool can print it and exit non-zero.
 */
export class CliError extends Error {
    status;
    body;
    name = 'CliError';
    constructor(message, status, body) {
        super(message);
        this.status = status;
        this.body = body;
    }
}
export class BrookClient {
    url;
    #token;
    constructor(o) {
        this.url = o.url.replace(/\/+$/, '');
        this.#token = o.token;
    }
    headers(extra = {}) {
        const h = { accept: 'application/json', ...extra };
        if (this.#token !== undefined && this.#token !== '')
            h['authorization'] = `Bearer ${this.#token}`;
        return h;
    }
    /** Sends a request; returns the parsed JSON body (undefined when empty). Throws CliError on any status >= 400. */
    async request(method, path, body, headers = {}) {
        const init = { method, headers: this.headers(headers) };
        if (body !== undefined) {
            init.body = typeof body === 'string' ? body : JSON.stringify(body);
            init.headers['content-type'] = 'application/json';
        }
        const res = await this.fetch(path, init);
        const text = await res.text();
        let parsed = undefined;
        if (text !== '') {
            try {
                parsed = JSON.parse(text);
            }
            catch {
                parsed = text;
            }
        }
        if (res.status >= 400)
            throw errorOf(res.status, parsed);
        return { status: res.status, body: parsed, headers: res.headers };
    }
    get(path) {
        return this.request('GET', path).then((r) => r.body);
    }
    /** fetch with the base URL, and a message naming the URL when the node cannot be reached. */
    async fetch(path, init) {
        try {
            return await fetch(this.url + path, init);
        }
        catch (err) {
            const cause = err.cause;
            throw new CliError(`cannot reach ${this.url}: ${cause?.code ?? cause?.message ?? err.message}`);
        }
    }
}
/** The message of an error answer: the Problem's status, title and detail; for a rejected publish, the failed items. */
export function errorOf(status, body, firstIndex = 0) {
    if (Array.isArray(body)) {
        const failed = body
            .map((item, i) => ({ i, item: item }))
            .filter((x) => x.item.publishing_status !== 'submitted');
        // Aborted items carry no detail: their status says it.
        const lines = failed.map((x) => `  event ${firstIndex + x.i}${x.item.eid === undefined ? '' : ` (${x.item.eid})`}: ${x.item.publishing_status} at ${x.item.step}${x.item.detail === undefined || x.item.detail === '' ? '' : `: ${x.item.detail}`}`);
        return new CliError(`${status}: ${status === 207 ? 'some events were not stored' : 'the batch was rejected'}\n${lines.join('\n')}`, status, body);
    }
    if (typeof body === 'object' && body !== null) {
        const p = body;
        return new CliError(`${status} ${p.title ?? ''}${p.detail === undefined ? '' : `: ${p.detail}`}`.trim(), status, body);
    }
    return new CliError(`${status}${typeof body === 'string' && body !== '' ? `: ${body}` : ''}`, status, body);
}
//# sourceMappingURL=client.js.map