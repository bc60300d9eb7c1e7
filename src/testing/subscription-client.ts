/**
 * TEST-ONLY: a client of one subscription stream that keeps reading in the background, so a test can
 * wait for lines, commit what it got and watch the stream end.
 */
import { Agent } from 'undici';
import { call, streamHeadTimeoutMs, type JsonResponse } from './broker-harness.js';

export interface SubscriptionCursor {
  partition: string;
  offset: string;
  event_type: string;
  cursor_token: string;
}

export interface SubscriptionLine {
  cursor: SubscriptionCursor;
  events?: Array<Record<string, unknown> & { order_number?: string; metadata: Record<string, unknown> }>;
  info?: { debug?: string };
}

export class SubscriptionStreamClient {
  readonly lines: SubscriptionLine[] = [];
  /** Resolves when the server ended the response (or the client closed it). */
  readonly ended: Promise<void>;
  #ended = false;
  readonly #agent: Agent;
  readonly #abort = new AbortController();
  readonly #waiters = new Set<() => void>();

  private constructor(
    readonly base: string,
    readonly subscription: string,
    readonly res: Response,
    readonly streamId: string,
    agent: Agent,
    /** Sent with every request of this client (e.g. Authorization). */
    readonly headers: Record<string, string> = {},
  ) {
    this.#agent = agent;
    this.ended = this.#pump();
  }

  /** Opens a stream; rejects with the response when it is not 200. */
  static async open(base: string, subscription: string, query = '', headers: Record<string, string> = {}): Promise<SubscriptionStreamClient> {
    const agent = new Agent();
    // A broker that never sends the head must fail the test, not hold it (and its process) for ever.
    const head = setTimeout(() => void agent.destroy().catch(() => undefined), streamHeadTimeoutMs);
    let res: Response;
    try {
      res = await fetch(`${base}/subscriptions/${subscription}/events${query === '' ? '' : '?' + query}`, { dispatcher: agent, headers } as unknown as RequestInit);
    } catch (err) {
      await agent.destroy().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(head);
    }
    if (res.status !== 200) {
      const text = await res.text();
      await agent.destroy();
      throw Object.assign(new Error(`stream answered ${res.status}: ${text}`), { status: res.status, text });
    }
    const id = res.headers.get('x-svc-streamid');
    if (id === null) throw new Error('no X-Svc-StreamId header');
    return new SubscriptionStreamClient(base, subscription, res, id, agent, headers);
  }

  async #pump(): Promise<void> {
    const reader = this.res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buf += decoder.decode(chunk.value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          this.lines.push(JSON.parse(buf.slice(0, nl)) as SubscriptionLine);
          buf = buf.slice(nl + 1);
        }
        this.#wake();
      }
    } catch {
      // closed by the client
    } finally {
      this.#ended = true;
      this.#wake();
      await this.#agent.destroy().catch(() => undefined);
    }
  }

  #wake(): void {
    for (const w of this.#waiters) w();
  }

  get isEnded(): boolean {
    return this.#ended;
  }

  /** Lines that carry events. */
  batches(): SubscriptionLine[] {
    return this.lines.filter((l) => l.events !== undefined && l.events.length > 0);
  }

  /** Every event received, in arrival order. */
  events(): NonNullable<SubscriptionLine['events']> {
    return this.batches().flatMap((l) => l.events!);
  }

  /** Order numbers received, in arrival order. */
  orders(): string[] {
    return this.events().map((e) => e.order_number ?? '');
  }

  /** Waits until the predicate holds (checked on every line and at the end); fails after timeoutMs. */
  async waitFor(pred: (c: SubscriptionStreamClient) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; ${this.lines.length} lines: ${JSON.stringify(this.lines).slice(0, 600)}`);
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#waiters.delete(done);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(done, Math.min(100, Math.max(1, deadline - Date.now())));
        this.#waiters.add(done);
      });
    }
  }

  /** Waits until the server ends the stream. */
  async waitEnded(timeoutMs = 10_000): Promise<void> {
    await this.waitFor((c) => c.isEnded, timeoutMs, 'the stream to end');
  }

  /** POST cursors with this stream's id. */
  commit(cursors: SubscriptionCursor[], headerName = 'X-Svc-StreamId'): Promise<JsonResponse> {
    return call(this.base, 'POST', `/subscriptions/${this.subscription}/cursors`, { items: cursors }, { ...this.headers, [headerName]: this.streamId });
  }

  /** Commits the cursor of every batch received so far (the last one per partition). */
  async commitAll(): Promise<JsonResponse | undefined> {
    const last = new Map<string, SubscriptionCursor>();
    for (const l of this.batches()) last.set(`${l.cursor.event_type}/${l.cursor.partition}`, l.cursor);
    if (last.size === 0) return undefined;
    return this.commit([...last.values()]);
  }

  /** Partitions this stream received events from. */
  partitions(): Set<string> {
    return new Set(this.batches().map((l) => l.cursor.partition));
  }

  /** Closes the client side (like a consumer that dies). */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.#agent.destroy().catch(() => undefined);
    await this.ended;
  }
}
