// The console's only way to the broker: the same HTTP API as every client, with the bearer token a
// person gave (kept in this tab's session storage, never elsewhere). Errors carry the Problem.

const tokenKey = 'brook.token';

export function token() {
  return sessionStorage.getItem(tokenKey) ?? '';
}

export function setToken(t) {
  if (t === '') sessionStorage.removeItem(tokenKey);
  else sessionStorage.setItem(tokenKey, t);
}

export class ApiError extends Error {
  constructor(status, problem, path) {
    const detail = problem && typeof problem === 'object' && !Array.isArray(problem) ? problem.detail ?? problem.title : undefined;
    super(`${status}${detail ? `: ${detail}` : ''}`);
    this.status = status;
    this.problem = problem;
    this.path = path;
  }
}

/** Listeners told about 401 and 403 answers (the shell shows them). */
const authListeners = new Set();
export function onAuthError(fn) {
  authListeners.add(fn);
}

export function headers(extra = {}) {
  const h = { accept: 'application/json', ...extra };
  const t = token();
  if (t !== '') h.authorization = `Bearer ${t}`;
  return h;
}

/** A JSON call; resolves with {status, body, headers}; rejects with ApiError for >= 400. */
export async function api(method, path, body, extraHeaders = {}) {
  const init = { method, headers: headers(extraHeaders) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let parsed;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (res.status >= 400) {
    const err = new ApiError(res.status, parsed, path);
    if (res.status === 401 || res.status === 403) for (const fn of authListeners) fn(err);
    throw err;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export const get = (path) => api('GET', path).then((r) => r.body);

/**
 * Reads a stream (application/x-json-stream) and calls onLine for each batch until the stream ends
 * or the signal aborts. Resolves when done; rejects with ApiError when the stream is refused.
 */
export async function stream(path, { headers: extra = {}, signal, onLine }) {
  const res = await fetch(path, { headers: headers(extra), signal });
  if (res.status >= 400) {
    const text = await res.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    const err = new ApiError(res.status, parsed, path);
    if (res.status === 401 || res.status === 403) for (const fn of authListeners) fn(err);
    throw err;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() !== '') onLine(JSON.parse(line));
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  } finally {
    reader.cancel().catch(() => {});
  }
}

export const enc = encodeURIComponent;
