/**
 * The broker's metrics: one prom-client Registry per broker (not the global one, so several brokers in
 * one process do not share figures), fed by the observer calls of the HTTP layer and the subscription
 * hub, plus gauges read at scrape time from small sources (Raft state, open streams, storage size).
 *
 * Two views of the same figures:
 * - GET /metrics/prometheus: the Prometheus text exposition (histograms with buckets).
 * - GET /metrics: the JSON object of compatibility.md, {"version","gauges","counters","histograms",
 *   "meters","timers"}, in the style of the original service's Dropwizard registry: names are dotted,
 *   a label set becomes a name suffix (brook.events.published.<event type>); durations in
 *   milliseconds; timers carry count, mean and quantiles over the last ten minutes
 *   (windowed-quantiles.ts), histograms the quantiles of event counts per request.
 *
 * Updates are per request or per batch (never per event), so metrics cost nothing measurable.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { WindowedQuantiles } from './windowed-quantiles.js';

/** Figures read when metrics are scraped. */
export interface MetricsSources {
  raft(): { term: number; commitIndex: number; appliedIndex: number; isLeader: boolean; leaderChanges?: number };
  openStreams(kind: 'low_level' | 'subscription'): number;
  /** Bytes of the node's data directory (RocksDB), or undefined when unknown. */
  storageBytes(): Promise<number | undefined>;
  /** Unconsumed events per subscription (summed over the partitions whose lag is known); see subscriptionLag. */
  subscriptionLag?(): { subscription: string; lag: number }[];
  /** The node Raft host's counts since start (node-host.ts, `stats`): turns, writes, messages. */
  raftHost?(): Readonly<Record<string, number>>;
  /** The node Raft host's messages per type since start (node-host.ts, `messageTypes`). */
  raftMessages?(): { readonly sent: ReadonlyMap<string, number>; readonly received: ReadonlyMap<string, number> };
  /** What the metadata group's read leases did (metadata-leases.ts, MetadataLeases.stats); absent without them. */
  readLeases?(): Readonly<Record<string, number>> | undefined;
  /** The append streams' counts since start (raft-transport.ts, `appendStreamStats`); none on a single node. */
  appendStream?(): Readonly<Record<string, number>> | undefined;
}

/** Subscriptions whose lag is exported at most: the label set stays bounded, and a scrape cheap. */
export const lagSubscriptionsMax = 1000;

/**
 * Per subscription, the unconsumed events of the partitions whose lag the broker knows (a partition
 * no stream has read yet has none: interface.md leaves unconsumed_events out there).
 */
export function subscriptionLag(
  subscriptions: Iterable<{ id: string }>,
  stats: (id: string) => { partitions: { unconsumed_events?: number }[] }[],
): { subscription: string; lag: number }[] {
  const out: { subscription: string; lag: number }[] = [];
  for (const s of subscriptions) {
    if (out.length >= lagSubscriptionsMax) break;
    let lag = 0;
    for (const et of stats(s.id)) for (const p of et.partitions) lag += p.unconsumed_events ?? 0;
    out.push({ subscription: s.id, lag });
  }
  return out;
}

/** The host counts brook_raft_host_work_total exports (node-host.ts, RaftNodeHost.stats). */
const raftHostWork = ['turns', 'readies', 'writes', 'durableWrites', 'sends', 'messagesSent', 'messagesReceived', 'stampedMessagesSent', 'batchesSent', 'batchesReceived', 'commitsInWrite', 'commitInWriteMicros'] as const;
/** The counts brook_append_stream_total exports (raft-transport.ts, appendStreamStats). */
const appendStreamWork = ['requests', 'messages', 'replies', 'replyMessages'] as const;

const latencyBuckets = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5];
const quantiles = [0.5, 0.75, 0.95, 0.99, 0.999];
/** The JSON timers' window: ten minutes in five slots (a read sees the last 8 to 10 minutes). */
const window = { maxAgeMs: 600_000, ageBuckets: 5 };
const durationRange = { min: 0.001, max: 3_600_000 };

type JsonMetrics = {
  version: string;
  gauges: Record<string, { value: number }>;
  counters: Record<string, { count: number }>;
  histograms: Record<string, Record<string, number>>;
  meters: Record<string, { count: number; mean_rate: number; units: string }>;
  timers: Record<string, Record<string, number | string>>;
};

export class BrokerMetrics {
  readonly registry = new Registry();
  readonly #version: string;
  readonly #startedMs: number;
  readonly #nowMs: () => number;
  readonly #eventsPublished: Counter<'event_type'>;
  readonly #publishRequests: Counter<'status'>;
  readonly #eventsConsumed: Counter<'event_type'>;
  readonly #bytesConsumed: Counter<'event_type'>;
  readonly #streamsOpened: Counter;
  readonly #commits: Counter;
  readonly #publishSeconds: Histogram<'event_type'>;
  readonly #commitSeconds: Histogram;
  readonly #publishMs: WindowedQuantiles;
  readonly #commitMs: WindowedQuantiles;
  readonly #batchEvents: WindowedQuantiles;
  readonly #fsyncSeconds: Histogram;
  readonly #fsyncMs: WindowedQuantiles;
  readonly #raftHostSeconds: Histogram;
  readonly #raftHostByPhase = new Map<string, { observe(v: number): void }>();
  readonly #publishRequestsByStatus = new Map<number, { inc(): void }>();
  readonly #publishedByType = new Map<string, { inc(n: number): void }>();
  readonly #publishSecondsByType = new Map<string, { observe(v: number): void }>();
  readonly #sources: MetricsSources;
  #storageBytes = 0;

  constructor(o: { version: string; sources: MetricsSources; nowMs: () => number; processMetrics?: boolean }) {
    this.#version = o.version;
    this.#sources = o.sources;
    this.#nowMs = o.nowMs;
    this.#startedMs = o.nowMs();
    const registers = [this.registry];
    this.#eventsPublished = new Counter({ name: 'brook_events_published_total', help: 'Events acknowledged to producers', labelNames: ['event_type'], registers });
    this.#publishRequests = new Counter({ name: 'brook_publish_requests_total', help: 'Publish requests by HTTP status', labelNames: ['status'], registers });
    this.#eventsConsumed = new Counter({ name: 'brook_events_consumed_total', help: 'Events sent to consumers (low-level and subscription streams)', labelNames: ['event_type'], registers });
    this.#bytesConsumed = new Counter({ name: 'brook_bytes_consumed_total', help: 'Bytes of stream lines sent to consumers', labelNames: ['event_type'], registers });
    this.#streamsOpened = new Counter({ name: 'brook_streams_opened_total', help: 'Streams opened (low-level and subscription)', registers });
    this.#commits = new Counter({ name: 'brook_cursor_commits_total', help: 'Subscription commit requests answered', registers });
    this.#publishSeconds = new Histogram({ name: 'brook_publish_duration_seconds', help: 'Publish request latency, from body received to answer, per event type', labelNames: ['event_type'], buckets: latencyBuckets, registers });
    this.#commitSeconds = new Histogram({ name: 'brook_commit_duration_seconds', help: 'Subscription commit latency (through the metadata Raft group)', buckets: latencyBuckets, registers });
    // Windowed quantiles for the JSON timers; not exported to Prometheus (the histograms are).
    this.#publishMs = new WindowedQuantiles({ ...window, ...durationRange }, o.nowMs);
    this.#commitMs = new WindowedQuantiles({ ...window, ...durationRange }, o.nowMs);
    this.#fsyncSeconds = new Histogram({
      name: 'brook_wal_fsync_duration_seconds',
      help: 'fdatasync of the RocksDB write-ahead log, one per group commit of durable writes',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1],
      registers,
    });
    this.#raftHostSeconds = new Histogram({
      name: 'brook_raft_host_phase_seconds',
      help: 'Where the commit path of the node\'s Raft host waits, per phase (src/broker/raft-host/node-host.ts, HostPhase)',
      labelNames: ['phase'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2],
      registers,
    });
    this.#fsyncMs = new WindowedQuantiles({ ...window, ...durationRange }, o.nowMs);
    this.#batchEvents = new WindowedQuantiles({ ...window, min: 1, max: 1_000_000 }, o.nowMs);

    const sources = this.#sources;
    new Gauge({
      name: 'brook_streams_open',
      help: 'Streams open on this node',
      labelNames: ['kind'],
      registers,
      collect() {
        this.set({ kind: 'low_level' }, sources.openStreams('low_level'));
        this.set({ kind: 'subscription' }, sources.openStreams('subscription'));
      },
    });
    // Read at scrape time from the host's own counts: nothing is counted per message here.
    new Counter({
      name: 'brook_raft_host_work_total',
      help: 'What the node\'s Raft host did since start: turns, group Readies, KV writes (durable ones), transport sends, messages sent and received',
      labelNames: ['what'],
      registers,
      collect() {
        const st = sources.raftHost?.();
        if (st === undefined) return;
        this.reset();
        for (const k of raftHostWork) this.inc({ what: k }, st[k] ?? 0);
      },
    });
    new Counter({
      name: 'brook_raft_messages_total',
      help: 'Raft messages of all groups the node\'s Raft host sent and received since start, per message type',
      labelNames: ['direction', 'type'],
      registers,
      collect() {
        const st = sources.raftMessages?.();
        if (st === undefined) return;
        this.reset();
        for (const [type, n] of st.sent) this.inc({ direction: 'sent', type }, n);
        for (const [type, n] of st.received) this.inc({ direction: 'received', type }, n);
      },
    });
    new Counter({
      name: 'brook_metadata_read_leases_total',
      help: 'Metadata read leases since start: publishes served under a lease (lease_reads) or after applying its index (apply_waits), without one (no_lease: a ReadIndex round), writes held for lease holders (gated) and those that failed so (gates_failed)',
      labelNames: ['what'],
      registers,
      collect() {
        const st = sources.readLeases?.();
        if (st === undefined) return;
        this.reset();
        for (const [k, v] of [['lease_reads', st.leaseReads], ['apply_waits', st.applyWaits], ['release_waits', st.releaseWaits], ['no_lease', st.noLease], ['gated', st.gated], ['gates_failed', st.gatesFailed]] as const) this.inc({ what: k }, v ?? 0);
      },
    });
    new Counter({
      name: 'brook_append_stream_total',
      help: 'Forwarded publishes on the append streams since start: requests sent and the messages that carried them, replies sent and their messages',
      labelNames: ['what'],
      registers,
      collect() {
        const st = sources.appendStream?.();
        if (st === undefined) return;
        this.reset();
        for (const k of appendStreamWork) this.inc({ what: k }, st[k] ?? 0);
      },
    });
    const raftGauge = (name: string, help: string, pick: (r: ReturnType<MetricsSources['raft']>) => number) =>
      new Gauge({ name, help, registers, collect() { this.set(pick(sources.raft())); } });
    raftGauge('brook_metadata_raft_term', 'Current Raft term of the metadata group', (r) => r.term);
    raftGauge('brook_metadata_raft_commit_index', 'Commit index of the metadata group on this node', (r) => r.commitIndex);
    raftGauge('brook_metadata_raft_applied_index', 'Applied index of the metadata group on this node', (r) => r.appliedIndex);
    raftGauge('brook_metadata_raft_is_leader', '1 when this node leads the metadata group', (r) => (r.isLeader ? 1 : 0));
    let leaderChangesSeen = 0;
    new Counter({
      name: 'brook_metadata_raft_leader_changes_total',
      help: 'Times this node saw the metadata leader change (including to no leader)',
      registers,
      collect() {
        const n = sources.raft().leaderChanges ?? 0;
        if (n > leaderChangesSeen) this.inc(n - leaderChangesSeen);
        leaderChangesSeen = Math.max(leaderChangesSeen, n);
      },
    });
    new Gauge({
      name: 'brook_subscription_unconsumed_events',
      help: 'Events not yet committed by a subscription, over the partitions whose lag is known',
      labelNames: ['subscription'],
      registers,
      collect() {
        this.reset();
        for (const s of sources.subscriptionLag?.() ?? []) this.set({ subscription: s.subscription }, s.lag);
      },
    });
    const self = this;
    new Gauge({
      name: 'brook_storage_bytes',
      help: 'Bytes of the node data directory (RocksDB files)',
      registers,
      async collect() {
        const b = await sources.storageBytes();
        if (b !== undefined) self.#storageBytes = b;
        this.set(self.#storageBytes);
      },
    });
    // prom-client's default process metrics watch every GC and the event loop while the broker runs,
    // which measurably lengthened the publish latency tail (docs/metrics.md); by default only figures
    // read at scrape time are kept.
    if (o.processMetrics === true) collectDefaultMetrics({ register: this.registry, prefix: 'brook_' });
    else {
      new Gauge({ name: 'brook_process_resident_memory_bytes', help: 'Resident memory of the broker process', registers, collect() { this.set(process.memoryUsage.rss()); } });
      new Gauge({ name: 'brook_process_heap_used_bytes', help: 'V8 heap in use', registers, collect() { this.set(process.memoryUsage().heapUsed); } });
      new Gauge({
        name: 'brook_process_cpu_seconds',
        help: 'CPU time of the broker process (user + system) since start',
        registers,
        collect() {
          const u = process.cpuUsage();
          this.set((u.user + u.system) / 1e6);
        },
      });
    }
  }

  // ---------------------------------------------------------------- observers (ApiObserver, HubObserver)

  published(eventType: string, events: number, durationMs: number, status: number): void {
    // Per request: the labelled children are looked up once per status and event type, not hashed per call.
    let byStatus = this.#publishRequestsByStatus.get(status);
    if (byStatus === undefined) this.#publishRequestsByStatus.set(status, (byStatus = this.#publishRequests.labels(String(status))));
    byStatus.inc();
    if (status !== 200 && status !== 207) return;
    if (status === 200 && events > 0) {
      let published = this.#publishedByType.get(eventType);
      if (published === undefined) this.#publishedByType.set(eventType, (published = this.#eventsPublished.labels(eventType)));
      published.inc(events);
    }
    let seconds = this.#publishSecondsByType.get(eventType);
    if (seconds === undefined) this.#publishSecondsByType.set(eventType, (seconds = this.#publishSeconds.labels(eventType)));
    seconds.observe(durationMs / 1000);
    this.#publishMs.observe(durationMs);
    this.#batchEvents.observe(events);
  }

  streamed(eventType: string, events: number, bytes: number): void {
    if (events > 0) this.#eventsConsumed.inc({ event_type: eventType }, events);
    this.#bytesConsumed.inc({ event_type: eventType }, bytes);
  }

  streamOpened(): void {
    this.#streamsOpened.inc();
  }

  streamClosed(): void {
    // Open streams are read from the source at scrape time; nothing to count here.
  }

  committed(durationMs: number): void {
    this.#commits.inc();
    this.#commitSeconds.observe(durationMs / 1000);
    this.#commitMs.observe(durationMs);
  }

  /** A WAL fdatasync of a group commit (log/rocks-kv.ts onSync). */
  fsynced(durationMs: number): void {
    this.#fsyncSeconds.observe(durationMs / 1000);
    this.#fsyncMs.observe(durationMs);
  }

  /** A phase of the Raft host's commit path took `durationMs` (node-host.ts onPhase). */
  raftHostPhase(phase: string, durationMs: number): void {
    // Called per group per turn: the labelled child is looked up once per phase, not hashed per call.
    let child = this.#raftHostByPhase.get(phase);
    if (child === undefined) this.#raftHostByPhase.set(phase, (child = this.#raftHostSeconds.labels(phase)));
    child.observe(durationMs / 1000);
  }

  // ---------------------------------------------------------------- views

  get contentType(): string {
    return this.registry.contentType;
  }

  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  async json(): Promise<JsonMetrics> {
    const out: JsonMetrics = { version: this.#version, gauges: {}, counters: {}, histograms: {}, meters: {}, timers: {} };
    const uptimeS = Math.max(0.001, (this.#nowMs() - this.#startedMs) / 1000);
    for (const m of await this.registry.getMetricsAsJSON()) {
      const base = m.name.replace(/^brook_/, 'brook.').replace(/_total$/, '').replace(/_/g, '.');
      const nameOf = (labels: Partial<Record<string, string | number>>) => [base, ...Object.values(labels).filter((x) => x !== undefined).map(String)].join('.');
      const type = String(m.type);
      if (type === 'gauge') {
        for (const v of m.values) out.gauges[nameOf(v.labels)] = { value: v.value };
      } else if (type === 'histogram' && m.name === 'brook_publish_duration_seconds') {
        // Per event type: count, sum and mean from the histogram (no quantiles: those would need a
        // windowed summary per event type; the all-types timer brook.publish has them).
        for (const v of m.values as { labels: Record<string, string | number | undefined>; value: number; metricName?: string }[]) {
          const et = v.labels['event_type'];
          if (et === undefined) continue;
          const t = (out.timers[`brook.publish.${et}`] ??= { count: 0, sum: 0, mean: 0, duration_units: 'milliseconds' });
          if (v.metricName === `${m.name}_count`) t['count'] = v.value;
          else if (v.metricName === `${m.name}_sum`) t['sum'] = v.value * 1000;
          else continue;
          t['mean'] = (t['count'] as number) > 0 ? (t['sum'] as number) / (t['count'] as number) : 0;
        }
      } else if (type === 'counter') {
        for (const v of m.values) {
          out.counters[nameOf(v.labels)] = { count: v.value };
          if (m.name === 'brook_events_published_total' || m.name === 'brook_events_consumed_total' || m.name === 'brook_publish_requests_total') {
            const units = m.name === 'brook_publish_requests_total' ? 'requests/second' : 'events/second';
            out.meters[nameOf(v.labels)] = { count: v.value, mean_rate: v.value / uptimeS, units };
          }
        }
      }
    }
    out.timers['brook.publish'] = this.#timer(this.#publishMs);
    out.timers['brook.commit'] = this.#timer(this.#commitMs);
    out.timers['brook.wal.fsync'] = this.#timer(this.#fsyncMs);
    out.histograms['brook.publish.batch.events'] = this.#quantiles(this.#batchEvents);
    return out;
  }

  #quantiles(w: WindowedQuantiles): Record<string, number> {
    const r: Record<string, number> = { count: w.count, sum: w.sum };
    const values = w.quantiles(quantiles);
    for (let i = 0; i < quantiles.length; i++) {
      const v = values[i]!;
      r[`p${quantiles[i]! * 100}`.replace('.', '_')] = Number.isNaN(v) ? 0 : v;
    }
    return r;
  }

  #timer(w: WindowedQuantiles): Record<string, number | string> {
    const q = this.#quantiles(w);
    const count = q['count'] ?? 0;
    return { ...q, mean: count > 0 ? (q['sum'] ?? 0) / count : 0, duration_units: 'milliseconds' };
  }
}
