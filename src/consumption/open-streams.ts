/**
 * The streams open on this node (low-level and subscription), so that a change of rules can end the
 * ones it concerns: the readers of an event type changed (interface.md: all its consumers are
 * disconnected; those still authorized may reconnect), or a consumer app or event type was
 * blacklisted. Each stream registers how to close itself; closing ends it like a client disconnect.
 */
export interface OpenStream {
  kind: 'low_level' | 'subscription';
  /** The subscription a subscription stream reads. */
  subscription?: string;
  /** Event types the stream reads. */
  eventTypes: readonly string[];
  /** The consuming application (the caller's uid). */
  app: string;
  close(reason: string): void;
}

export class OpenStreams {
  readonly #open = new Set<OpenStream>();

  /** Registers a stream; the returned function unregisters it. */
  add(s: OpenStream): () => void {
    this.#open.add(s);
    return () => this.#open.delete(s);
  }

  /** Closes every stream the predicate selects; returns how many. */
  closeWhere(select: (s: OpenStream) => boolean, reason: string): number {
    let n = 0;
    for (const s of [...this.#open]) {
      if (!select(s)) continue;
      this.#open.delete(s);
      s.close(reason);
      n++;
    }
    return n;
  }

  count(kind?: OpenStream['kind']): number {
    let n = 0;
    for (const s of this.#open) if (kind === undefined || s.kind === kind) n++;
    return n;
  }
}
