/**
 * Low-level stream consumers for the benchmark.
 *
 * countingStream(): reads a whole stream with undici and counts events WITHOUT parsing every event:
 * each NDJSON line starts with its cursor, and offsets are dense per partition, so a line carries
 * (its cursor offset - the previous cursor offset of that partition) events. Only the first ~128 bytes
 * of a line are decoded; lines are found with Buffer.indexOf (native). Every 25th line is JSON.parsed
 * in full and its events counted, to check the offset arithmetic against the real content.
 *
 * stalledStream(): a raw TCP socket that sends the GET, reads until one complete batch line has
 * arrived, then stops reading (socket.pause(): the kernel receive buffer fills, the TCP window
 * closes, and the broker's socket writes start returning false).
 */
import { connect, type Socket } from 'node:net';
import { Client } from 'undici';

export function beginCursors(partitions: number): string {
  return JSON.stringify(Array.from({ length: partitions }, (_, p) => ({ partition: String(p), offset: 'BEGIN' })));
}

const headBytes = 128;
const cursorRe = /^\{"cursor":\{"partition":"([^"]+)","offset":"(?:BEGIN|001-[0-9a-f]{4}-([0-9]{18}))"/;

export class LineCounter {
  events = 0;
  lines = 0;
  bytes = 0;
  sampledLines = 0;
  sampleMismatches = 0;
  readonly #prev = new Map<string, number>();
  #inHead = true;
  #head: Buffer[] = [];
  #headLen = 0;
  #lineEvents = 0;
  #sample: Buffer[] | null = null;
  constructor(readonly sampleEvery = 25) {}

  feed(chunk: Buffer): void {
    this.bytes += chunk.length;
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#inHead) {
        const take = Math.min(end - pos, headBytes - this.#headLen);
        if (take > 0) {
          this.#head.push(chunk.subarray(pos, pos + take));
          this.#headLen += take;
        }
        if (this.#headLen >= headBytes || nl !== -1) this.#onHead();
      }
      if (this.#sample !== null) this.#sample.push(chunk.subarray(pos, end));
      if (nl === -1) break;
      this.#onLineEnd();
      pos = nl + 1;
    }
  }

  #onHead(): void {
    const text = Buffer.concat(this.#head, this.#headLen).toString('latin1');
    this.#inHead = false;
    this.#head = [];
    this.#headLen = 0;
    const m = cursorRe.exec(text);
    if (m === null) throw new Error(`unexpected line start: ${text.slice(0, 100)}`);
    const partition = m[1]!;
    const offset = m[2] === undefined ? -1 : Number(m[2]);
    const prev = this.#prev.get(partition) ?? -1;
    this.#lineEvents = offset - prev;
    this.events += this.#lineEvents;
    this.#prev.set(partition, offset);
  }

  #onLineEnd(): void {
    if (this.#sample !== null) {
      const line = JSON.parse(Buffer.concat(this.#sample).toString('utf8')) as { events?: unknown[] };
      this.sampledLines++;
      if ((line.events?.length ?? 0) !== this.#lineEvents) this.sampleMismatches++;
    }
    this.lines++;
    this.#inHead = true;
    this.#sample = this.lines % this.sampleEvery === 0 ? [] : null;
  }
}

export interface StreamReadResult {
  events: number;
  lines: number;
  bytes: number;
  seconds: number;
  firstByteMs: number;
  eventsPerS: number;
  mbPerS: number;
  sampledLines: number;
  sampleMismatches: number;
  status: number;
}

export async function countingStream(url: string, path: string, cursors: string): Promise<StreamReadResult> {
  const client = new Client(url, { bodyTimeout: 120_000, headersTimeout: 60_000 });
  try {
    const t0 = performance.now();
    const res = await client.request({ method: 'GET', path, headers: { 'x-svc-cursors': cursors } });
    const firstByteMs = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
    const counter = new LineCounter();
    for await (const chunk of res.body) counter.feed(chunk as Buffer);
    const seconds = (performance.now() - t0) / 1000;
    return {
      events: counter.events,
      lines: counter.lines,
      bytes: counter.bytes,
      seconds,
      firstByteMs,
      eventsPerS: counter.events / seconds,
      mbPerS: counter.bytes / seconds / 1e6,
      sampledLines: counter.sampledLines,
      sampleMismatches: counter.sampleMismatches,
      status: res.statusCode,
    };
  } finally {
    await client.close();
  }
}

export interface StalledStream {
  socket: Socket;
  /** Bytes received before pausing. */
  receivedBytes: number;
  close(): void;
}

/** Opens a stream, waits for the first complete batch line, then stops reading. */
export function stalledStream(port: number, path: string, cursors: string, timeoutMs = 30_000): Promise<StalledStream> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = 0;
    let tail = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('stalled stream: no complete line within the timeout'));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Svc-Cursors: ${cursors}\r\n\r\n`);
    });
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      // A batch line ends with "]}\n" (then the chunked-encoding CRLF); JSON text never holds a raw newline.
      const text = tail + chunk.toString('latin1');
      if (text.includes(']}\n')) {
        socket.pause();
        socket.off('data', onData);
        clearTimeout(timer);
        resolve({ socket, receivedBytes: received, close: () => socket.destroy() });
        return;
      }
      tail = text.slice(-4);
      if (received === chunk.length && !text.startsWith('HTTP/1.1 200')) {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(`unexpected response: ${text.slice(0, 200)}`));
      }
    };
    socket.on('data', onData);
  });
}
