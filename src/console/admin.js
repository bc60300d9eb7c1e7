// Subscriptions (list, detail with per-partition committed offset, lag and owning stream, a cursor
// reset behind a confirmation, lag over time), settings (feature toggles, blacklist, storages,
// timelines) and the metrics plots.
import { api, enc, get } from './api.js';
import { LiveChart, MetricsSampler, historySeconds } from './charts.js';
import { errorBox, fields, fmtBytes, h, link, table } from './dom.js';

// ---------------------------------------------------------------- subscriptions

async function allSubscriptions(filter = '') {
  const items = [];
  let next = `/subscriptions?limit=100${filter}`;
  while (next !== undefined && items.length < 1000) {
    const page = await get(next);
    items.push(...page.items);
    next = page.items.length === 0 ? undefined : page._links?.next?.href;
  }
  return items;
}

export async function subscriptionsPage(_params, ctx) {
  const et = ctx.query.get('event_type');
  const subs = await allSubscriptions(et ? `&event_type=${enc(et)}` : '');
  return h(
    'div',
    {},
    h('h1', {}, 'Subscriptions', et ? h('span', { class: 'muted' }, ` reading ${et}`) : ''),
    subs.length === 0
      ? h('p', { class: 'muted' }, 'No subscriptions.')
      : table(
          ['id', 'owner', 'event types', 'consumer group', 'read from', 'created'],
          subs.map((s) => [link(`/console/subscriptions/${enc(s.id)}`, h('code', {}, s.id)), s.owning_application, s.event_types.join(', '), s.consumer_group, s.read_from, s.created_at]),
          { 'data-testid': 'subscriptions' },
        ),
  );
}

/** Lag samples per subscription, kept while the tab lives (the page samples /stats itself). */
const lagHistory = new Map();

function recordLag(id, stats) {
  const t = Date.now() / 1000;
  const series = lagHistory.get(id) ?? {};
  for (const et of stats.items) {
    for (const p of et.partitions) {
      if (p.unconsumed_events === undefined) continue;
      (series[`${et.event_type}/${p.partition}`] ??= []).push([t, p.unconsumed_events]);
    }
  }
  for (const k of Object.keys(series)) series[k] = series[k].filter(([x]) => x > t - historySeconds);
  lagHistory.set(id, series);
  return series;
}

export async function subscriptionPage({ id }, ctx) {
  const sub = await get(`/subscriptions/${enc(id)}`);
  const statsBox = h('div');
  const chart = new LiveChart('Unconsumed events per partition', '', 'lag-chart');
  const message = h('div');
  let committed = [];
  let stats = { items: [] };
  const offsets = new Map();

  const refresh = async () => {
    [stats, committed] = await Promise.all([get(`/subscriptions/${enc(id)}/stats`), get(`/subscriptions/${enc(id)}/cursors`).then((r) => r.items)]);
    const cursorOf = (et, p) => committed.find((c) => c.event_type === et && c.partition === p)?.offset;
    const rows = stats.items.flatMap((et) =>
      et.partitions.map((p) => {
        const key = `${et.event_type}/${p.partition}`;
        const input = offsets.get(key) ?? h('input', { type: 'text', style: 'width:19em', 'data-testid': `reset-${key}` });
        if (!offsets.has(key)) input.value = cursorOf(et.event_type, p.partition) ?? 'BEGIN';
        offsets.set(key, input);
        return [
          et.event_type,
          p.partition,
          h('span', { class: `badge ${p.state === 'assigned' ? 'ok' : p.state === 'reassigning' ? 'warn' : ''}` }, p.state),
          p.stream_id ? h('code', {}, p.stream_id) : '-',
          h('code', {}, cursorOf(et.event_type, p.partition) ?? '-'),
          p.unconsumed_events === undefined ? h('span', { class: 'muted', title: 'No stream has read this partition yet' }, 'unknown') : p.unconsumed_events,
          input,
        ];
      }),
    );
    statsBox.replaceChildren(table(['event type', 'partition', 'state', 'stream', 'committed offset', 'lag', 'reset to'], rows, { 'data-testid': 'subscription-stats' }));
    chart.setData(recordLag(id, stats));
  };
  await refresh();
  const timer = setInterval(() => refresh().catch((err) => message.replaceChildren(errorBox(err))), 2000);
  ctx.onCleanup(() => clearInterval(timer));

  const toBegin = h('button', { type: 'button' }, 'all to BEGIN');
  toBegin.addEventListener('click', () => {
    for (const input of offsets.values()) input.value = 'BEGIN';
  });
  const reset = h('button', { type: 'button', class: 'danger', 'data-testid': 'reset' }, 'Reset cursors...');
  reset.addEventListener('click', () => {
    const items = [...offsets.entries()].map(([key, input]) => {
      const slash = key.lastIndexOf('/');
      return { event_type: key.slice(0, slash), partition: key.slice(slash + 1), offset: input.value.trim() };
    });
    const go = h('button', { type: 'button', class: 'danger', 'data-testid': 'confirm-reset' }, 'Confirm reset');
    const cancel = h('button', { type: 'button' }, 'Cancel');
    const box = h(
      'div',
      { class: 'confirm', 'data-testid': 'reset-confirmation' },
      h('p', {}, h('strong', {}, `Reset ${items.length} cursor${items.length === 1 ? '' : 's'} of subscription ${id}?`), ' Its open streams are closed, and consumers continue after the offsets below. This cannot be undone.'),
      h('ul', {}, items.map((c) => h('li', {}, `${c.event_type} partition ${c.partition} → `, h('code', {}, c.offset)))),
      go,
      ' ',
      cancel,
    );
    cancel.addEventListener('click', () => message.replaceChildren());
    go.addEventListener('click', async () => {
      try {
        await api('PATCH', `/subscriptions/${enc(id)}/cursors`, { items });
        offsets.clear();
        await refresh();
        message.replaceChildren(h('div', { class: 'success', 'data-testid': 'reset-done' }, 'Cursors reset.'));
      } catch (err) {
        message.replaceChildren(errorBox(err));
      }
    });
    message.replaceChildren(box);
  });

  return h(
    'div',
    {},
    h('h1', {}, 'Subscription ', h('code', {}, sub.id)),
    fields([
      ['owning application', sub.owning_application],
      ['event types', h('span', {}, sub.event_types.map((n, i) => [i > 0 ? ', ' : '', link(`/console/event-types/${enc(n)}`, n)]))],
      ['consumer group', sub.consumer_group],
      ['read from', sub.read_from],
      ['created', sub.created_at],
    ]),
    h('h2', {}, 'Partitions'),
    h('p', { class: 'hint' }, 'Refreshed every 2 seconds. The lag of a partition no stream has read yet is not known to the broker.'),
    statsBox,
    h('div', { class: 'toolbar' }, toBegin, reset),
    message,
    h('h2', {}, 'Lag over time'),
    chart.box,
  );
}

// ---------------------------------------------------------------- settings

export async function settingsPage(_params, ctx) {
  const out = h('div', {}, h('h1', {}, 'Settings'), h('p', { class: 'hint' }, 'Administrator only when authentication is on.'));
  const features = h('div');
  const blacklist = h('div');
  const storages = h('div');
  const timelines = h('div');
  out.append(h('h2', {}, 'Feature toggles'), features, h('h2', {}, 'Blacklist'), blacklist, h('h2', {}, 'Storages'), storages, h('h2', {}, 'Timelines'), timelines);

  const showFeatures = async () => {
    const f = (await get('/settings/features')).items;
    features.replaceChildren(
      table(
        ['feature', 'state', ''],
        f.map((x) => {
          const b = h('button', { type: 'button', 'data-testid': `toggle-${x.feature}` }, x.enabled ? 'turn off' : 'turn on');
          b.addEventListener('click', async () => {
            try {
              await api('POST', '/settings/features', { feature: x.feature, enabled: !x.enabled });
              await showFeatures();
            } catch (err) {
              features.prepend(errorBox(err));
            }
          });
          return [x.feature, h('span', { class: `badge ${x.enabled ? 'ok' : ''}`, 'data-testid': `feature-${x.feature}` }, x.enabled ? 'on' : 'off'), b];
        }),
        { 'data-testid': 'features' },
      ),
    );
  };

  const showBlacklist = async () => {
    const b = await get('/settings/blacklist');
    const rows = [];
    for (const [side, l] of [['CONSUMER', b.consumers], ['PRODUCER', b.producers]]) {
      for (const [kind, names] of [['APP', l?.apps ?? []], ['ET', l?.event_types ?? []]]) {
        for (const n of names) {
          const type = `${side}_${kind}`;
          const rm = h('button', { type: 'button' }, 'remove');
          rm.addEventListener('click', async () => {
            await api('DELETE', `/settings/blacklist/${type}/${enc(n)}`).catch((err) => blacklist.prepend(errorBox(err)));
            await showBlacklist();
          });
          rows.push([type, n, rm]);
        }
      }
    }
    const type = h('select', { 'data-testid': 'blacklist-type' }, ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'].map((t) => h('option', { value: t }, t)));
    const name = h('input', { type: 'text', placeholder: 'application or event type', 'data-testid': 'blacklist-name' });
    const add = h('button', { type: 'button', 'data-testid': 'blacklist-add' }, 'Block');
    add.addEventListener('click', async () => {
      try {
        await api('PUT', `/settings/blacklist/${type.value}/${enc(name.value.trim())}`);
        await showBlacklist();
      } catch (err) {
        blacklist.prepend(errorBox(err));
      }
    });
    blacklist.replaceChildren(
      rows.length === 0 ? h('p', { class: 'muted' }, 'Nobody is blocked.') : table(['type', 'name', ''], rows, { 'data-testid': 'blacklist' }),
      h('div', { class: 'toolbar' }, type, name, add),
    );
  };

  const showStorages = async () => {
    const s = await get('/storages');
    storages.replaceChildren(table(['id', 'type', 'configuration'], s.map((x) => [x.id, x.storage_type, h('code', {}, JSON.stringify(x.broker_configuration))]), { 'data-testid': 'storages' }));
  };

  const showTimelines = async () => {
    const names = (await get('/event-types')).map((e) => e.name).sort();
    const sel = h('select', { 'data-testid': 'timelines-event-type' }, h('option', { value: '' }, 'choose an event type'), names.map((n) => h('option', { value: n }, n)));
    const list = h('div', { 'data-testid': 'timelines' });
    sel.addEventListener('change', async () => {
      if (sel.value === '') return list.replaceChildren();
      try {
        const t = await get(`/event-types/${enc(sel.value)}/timelines`);
        list.replaceChildren(
          t.length === 0
            ? h('p', { class: 'muted' }, 'One implicit timeline on the default storage (no switch yet).')
            : table(['order', 'id', 'storage', 'created', 'switched'], t.map((x) => [x.order, h('code', {}, x.id), x.storage_id, x.created_at, x.switched_at])),
        );
      } catch (err) {
        list.replaceChildren(errorBox(err));
      }
    });
    timelines.replaceChildren(h('div', { class: 'toolbar' }, sel), list);
  };

  // Each section fails on its own (a 403 on settings does not hide the storages' answer, and so on).
  await Promise.all(
    [
      [features, showFeatures],
      [blacklist, showBlacklist],
      [storages, showStorages],
      [timelines, showTimelines],
    ].map(([box, show]) => show().catch((err) => box.replaceChildren(errorBox(err)))),
  );
  void ctx;
  return out;
}

// ---------------------------------------------------------------- metrics plots

const sampler = new MetricsSampler(get);
const lagSampler = { timer: undefined, listeners: new Set() };
/** Subscription id -> how the lag chart names it: its owning application and the start of its id. */
const lagLabels = new Map();

function startLagSampling() {
  if (lagSampler.timer !== undefined) return;
  const tick = async () => {
    try {
      const subs = (await allSubscriptions()).slice(0, 20);
      for (const s of subs) {
        lagLabels.set(s.id, `${s.owning_application} ${s.id.slice(0, 8)}`);
        recordLag(s.id, await get(`/subscriptions/${enc(s.id)}/stats`));
      }
    } catch {
      // shown by the metrics sampler's error, or simply no data
    }
    for (const fn of lagSampler.listeners) fn();
  };
  void tick();
  lagSampler.timer = setInterval(tick, 5000);
}

export async function metricsPage(_params, ctx) {
  // GET /metrics is this node's: say which node, and that the others have their own.
  const node = await get('/cluster').catch(() => undefined);
  const members = node?.members?.length ?? 1;
  const publish = new LiveChart('Published events/s per event type', '', 'chart-publish');
  const consume = new LiveChart('Consumed events/s per event type', '', 'chart-consume');
  const latency = new LiveChart('Publish latency per event type (mean ms)', ' ms', 'chart-latency');
  const quantiles = new LiveChart('Publish latency, all event types (ms, 10-minute window)', ' ms', 'chart-quantiles');
  const fsync = new LiveChart('WAL fsync latency (ms, 10-minute window)', ' ms', 'chart-fsync');
  const lag = new LiveChart('Subscription lag (unconsumed events)', '', 'chart-lag');
  const status = h('p', { class: 'hint', 'data-testid': 'sample-status' });
  const summary = h('div', { class: 'cards' });

  const update = (s) => {
    if (s.lastError !== undefined) status.replaceChildren(errorBox(s.lastError));
    else
      status.textContent =
        `${s.samples.length} samples of GET /metrics${node === undefined ? '' : ` of node ${node.id}`}, every ${s.intervalMs / 1000} s while the console is open (the last ${historySeconds / 60} minutes are kept in this tab).` +
        (members > 1 ? ` Rates, latencies and totals are this node's: the requests it served and the storage it holds (each node's console shows its own); subscription lag comes from GET /subscriptions/{id}/stats.` : '');
    publish.setData(s.rates('brook.events.published.'));
    consume.setData(s.rates('brook.events.consumed.'));
    latency.setData(s.latencies());
    quantiles.setData(s.quantiles('brook.publish', ['p50', 'p99']));
    fsync.setData(s.quantiles('brook.wal.fsync', ['p50', 'p99']));
    const last = s.samples.at(-1)?.m;
    if (last !== undefined) {
      const sum = (prefix) => Object.entries(last.counters).filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v.count, 0);
      summary.replaceChildren(
        ...[
          ['events published', sum('brook.events.published.').toLocaleString('en-US'), 'total-published'],
          ['events consumed', sum('brook.events.consumed.').toLocaleString('en-US'), 'total-consumed'],
          ['open streams', String((last.gauges['brook.streams.open.low_level']?.value ?? 0) + (last.gauges['brook.streams.open.subscription']?.value ?? 0)), 'open-streams'],
          ['storage', fmtBytes(last.gauges['brook.storage.bytes']?.value), 'storage-bytes'],
        ].map(([label, value, id]) => h('div', { class: 'card' }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-testid': id }, value))),
      );
    }
  };
  const updateLag = () => {
    const series = {};
    for (const [id, perPartition] of lagHistory) {
      const byTime = new Map();
      for (const points of Object.values(perPartition)) for (const [t, v] of points) byTime.set(t, (byTime.get(t) ?? 0) + v);
      if (byTime.size > 0) series[lagLabels.get(id) ?? id.slice(0, 8)] = [...byTime.entries()].sort((a, b) => a[0] - b[0]);
    }
    lag.setData(series);
  };
  sampler.listeners.add(update);
  lagSampler.listeners.add(updateLag);
  ctx.onCleanup(() => {
    sampler.listeners.delete(update);
    lagSampler.listeners.delete(updateLag);
  });
  sampler.start();
  startLagSampling();
  update(sampler);
  updateLag();
  return h(
    'div',
    {},
    h('h1', {}, 'Metrics'),
    status,
    summary,
    h('div', { class: 'charts' }, publish.box, consume.box, latency.box, quantiles.box, fsync.box, lag.box),
  );
}
