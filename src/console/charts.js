// Time-series plots with uPlot, fed by samples the page takes from the broker's own endpoints
// (GET /metrics, GET /subscriptions/{id}/stats). No external service: the history lives in this tab.
import uPlot from '/console/vendor/uPlot.esm.js';
import { h } from './dom.js';

const palette = ['#1f6feb', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0969da', '#57606a', '#fb8500', '#2a9d8f'];

/** Keeps this many seconds of samples. */
export const historySeconds = 600;

/**
 * A chart whose series may come and go: setData({name: [[t, v]...]}) rebuilds the plot when the set
 * of series changes and updates it in place otherwise.
 */
export class LiveChart {
  constructor(title, unit, testid) {
    this.title = title;
    this.unit = unit;
    this.box = h('div', { class: 'chart', 'data-testid': testid, 'data-points': '0' }, h('div', { class: 'muted' }, `${title}: waiting for samples...`));
    this.plot = undefined;
    this.keys = '';
  }

  setData(series) {
    const names = Object.keys(series).sort();
    const times = [...new Set(names.flatMap((n) => series[n].map(([t]) => t)))].sort((a, b) => a - b);
    const points = names.reduce((s, n) => s + series[n].length, 0);
    this.box.dataset.points = String(points);
    this.box.dataset.series = names.join(',');
    // Per series its newest and highest value, for a reader of the page's markup (and its tests).
    this.box.dataset.summary = JSON.stringify(
      Object.fromEntries(names.filter((n) => series[n].length > 0).map((n) => [n, { last: series[n].at(-1)[1], max: Math.max(...series[n].map(([, v]) => v ?? 0)) }])),
    );
    if (times.length === 0) return;
    const columns = names.map((n) => {
      const m = new Map(series[n]);
      return times.map((t) => (m.has(t) ? m.get(t) : null));
    });
    const data = [times, ...columns];
    const keys = names.join('\u0000');
    if (this.plot === undefined || keys !== this.keys) {
      this.plot?.destroy();
      this.box.replaceChildren();
      this.keys = keys;
      const unit = this.unit;
      this.plot = new uPlot(
        {
          title: this.title,
          width: 560,
          height: 220,
          // One sample alone would stretch the time axis over years: show the minute before it.
          scales: {
            x: {
              time: true,
              range: (u, min, max) => {
                const xs = u.data[0];
                return xs.length > 0 && xs[0] === xs[xs.length - 1] ? [xs[0] - 60, xs[0] + 1] : [min, max];
              },
            },
          },
          axes: [{}, { values: (_u, vals) => vals.map((v) => (v === null ? '' : `${+v.toFixed(3)}${unit}`)), size: 70 }],
          series: [{}, ...names.map((n, i) => ({ label: n, stroke: palette[i % palette.length], width: 1.5, spanGaps: true }))],
        },
        data,
        this.box,
      );
    } else {
      this.plot.setData(data);
    }
  }
}

/**
 * Samples GET /metrics every few seconds while started, and derives per-event-type publish and
 * consume rates (from the counters) and publish latency (from the timers' sum and count).
 */
export class MetricsSampler {
  constructor(get, intervalMs = 2000) {
    this.get = get;
    this.intervalMs = intervalMs;
    this.samples = [];
    this.listeners = new Set();
    this.timer = undefined;
    this.lastError = undefined;
  }

  start() {
    if (this.timer !== undefined) return;
    const tick = async () => {
      try {
        const m = await this.get('/metrics');
        this.lastError = undefined;
        this.samples.push({ t: Date.now() / 1000, m });
        const cutoff = Date.now() / 1000 - historySeconds;
        while (this.samples.length > 0 && this.samples[0].t < cutoff) this.samples.shift();
      } catch (err) {
        this.lastError = err;
      }
      for (const fn of this.listeners) fn(this);
    };
    void tick();
    this.timer = setInterval(tick, this.intervalMs);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Per name suffix of counters starting with prefix: the rate per second between samples. */
  rates(prefix) {
    const out = {};
    for (let i = 1; i < this.samples.length; i++) {
      const a = this.samples[i - 1];
      const b = this.samples[i];
      const dt = b.t - a.t;
      if (dt <= 0) continue;
      for (const [name, c] of Object.entries(b.m.counters)) {
        if (!name.startsWith(prefix)) continue;
        const key = name.slice(prefix.length);
        const before = a.m.counters[name]?.count ?? 0;
        (out[key] ??= []).push([b.t, Math.max(0, (c.count - before) / dt)]);
      }
    }
    return out;
  }

  /** Per event type: the mean publish latency (ms) of the requests between two samples. */
  latencies() {
    const out = {};
    for (let i = 1; i < this.samples.length; i++) {
      const a = this.samples[i - 1];
      const b = this.samples[i];
      for (const [name, t] of Object.entries(b.m.timers)) {
        if (!name.startsWith('brook.publish.') || name === 'brook.publish') continue;
        const key = name.slice('brook.publish.'.length);
        const before = a.m.timers[name] ?? { count: 0, sum: 0 };
        const n = t.count - before.count;
        out[key] ??= [];
        if (n > 0) out[key].push([b.t, (t.sum - before.sum) / n]);
      }
    }
    return out;
  }

  /** Quantiles of a timer over time (the broker's ten-minute window), e.g. p50 and p99 of brook.publish. */
  quantiles(timer, names) {
    const out = {};
    for (const s of this.samples) {
      const t = s.m.timers[timer];
      if (t === undefined) continue;
      for (const n of names) (out[n] ??= []).push([s.t, t[n] ?? 0]);
    }
    return out;
  }
}
