/**
 * The command-line tool's HTTP client: one node's URL and an optional bearer token. Every error
 * answer becomes a CliError carrying the Problem's detail (or the 422/207 items of a publish), so
 * the tool can print it and exit non-zero.
 */

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  url: string;
  token?: string | undefined;
}

export class BrookClient {
  readonly url: string;
  readonly #token: string | undefined;

  constructor(o: ClientOptions) {
    this.url = o.url.replace(/\/+$/, '');
    this.#token = o.token;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', ...extra };
    if (this.#token !== undefined && this.#token !== '') h['authorization'] = `Bearer ${this.#token}`;
    return h;
  }

  /** Sends a request; returns the parsed JSON body (undefined when empty). Throws CliError on any status >= 400. */
  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
    const init: RequestInit = { method, headers: this.headers(headers) };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await this.fetch(path, init);
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (res.status >= 400) throw errorOf(res.status, parsed);
    return { status: res.status, body: parsed, headers: res.headers };
  }

  get<T>(path: string): Promise<T> {
    return this.request('GET', path).then((r) => r.body as T);
  }

  /** fetch with the base URL, and a message naming the URL when the node cannot be reached. */
  async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(this.url + path, init);
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach ${this.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }
}

/** The message of an error answer: the Problem's status, title and detail; for a rejected publish, the failed items. */
export function errorOf(status: number, body: unknown, firstIndex = 0): CliError {
  if (Array.isArray(body)) {
    const failed = body
      .map((item, i) => ({ i, item: item as { publishing_status?: string; step?: string; detail?: string; eid?: string } }))
      .filter((x) => x.item.publishing_status !== 'submitted');
    // Aborted items carry no detail: their status says it.
    const lines = failed.map((x) => `  event ${firstIndex + x.i}${x.item.eid === undefined ? '' : ` (${x.item.eid})`}: ${x.item.publishing_status} at ${x.item.step}${x.item.detail === undefined || x.item.detail === '' ? '' : `: ${x.item.detail}`}`);
    return new CliError(`${status}: ${status === 207 ? 'some events were not stored' : 'the batch was rejected'}\n${lines.join('\n')}`, status, body);
  }
  if (typeof body === 'object' && body !== null) {
    const p = body as { title?: string; detail?: string };
    return new CliError(`${status} ${p.title ?? ''}${p.detail === undefined ? '' : `: ${p.detail}`}`.trim(), status, body);
  }
  return new CliError(`${status}${typeof body === 'string' && body !== '' ? `: ${body}` : ''}`, status, body);
}
