// The cluster overview, the event types (list, detail with partitions, schema versions and a diff,
// authorization), the event browser and the publish page.
import { api, enc, get, stream } from './api.js';
import { card, errorBox, fields, fmtNumber, h, link, table, uuid } from './dom.js';

// ---------------------------------------------------------------- cluster overview

// Placements name Raft member ids: the node id, or incarnation * 2^31 + node id for a data directory
// that replaced a wiped one (src/core/member-id.ts). People read them as "3" and "3.17" (node 3,
// incarnation 17), and reachability is a node's.
const nodeSpan = 2 ** 31;
const nodeOf = (member) => member % nodeSpan;
function memberLabel(member) {
  const inc = Math.floor(member / nodeSpan);
  return inc === 0 ? String(member) : `${nodeOf(member)}.${inc}`;
}

/** How one replica of a partition stands, as the answering node knows it (and whether its member is reachable). */
function replicaBadge(r, leader, members) {
  // `member` is absent from nodes of earlier versions, whose `node` was the member id.
  const id = r.member ?? r.node;
  const member = members.find((x) => x.id === nodeOf(id));
  const unreachable = member !== undefined && !member.reachable;
  // No figures: this node does not lead the group (it cannot know), or it leads it and the replica's
  // node reported nothing (down, unreachable: not in sync).
  const state =
    r.applied_index === null
      ? r.in_sync
        ? { cls: '', text: 'not known here' }
        : { cls: 'bad', text: 'not reporting' }
      : r.in_sync
        ? { cls: 'ok', text: r.lag ? `in sync (${r.lag} behind)` : 'in sync' }
        : { cls: 'bad', text: `behind by ${r.lag}` };
  // Incomplete: it holds the Raft log but still fetches the retained log before its snapshot (it
  // cannot serve that log to others, and it leads only until a complete replica can). Not a problem
  // by itself; absent (a node of an earlier version) or null (not known here) shows nothing.
  const incomplete = r.incomplete === true;
  const parts = [r.role === 'learner' ? 'learner' : null, id === leader ? 'leader' : null, state.text, incomplete ? 'incomplete: fetching the retained log' : null, unreachable ? 'node unreachable' : null].filter((x) => x !== null);
  const cls = unreachable ? 'bad' : incomplete && state.cls !== 'bad' ? 'warn' : state.cls;
  return h('span', { class: `badge ${cls}`, 'data-node': String(nodeOf(id)), 'data-member': String(id), title: parts.join(', ') }, `${memberLabel(id)}${id === leader ? '★' : ''}: ${parts.join(', ')}`);
}

/**
 * The replica move in flight (POST /cluster/partitions/{group}/move), if any: it is not a problem by
 * itself, but a person watching the cluster must see that a replica is on its way from one node to
 * another, and whether the new one still learns (a learner) or already votes.
 */
function moveBadge(p) {
  const { from, to } = p.moving;
  const [f, t] = [memberLabel(from), memberLabel(to)];
  const step = (p.learners ?? []).includes(to) ? `${t} is a learner catching up` : p.replicas.includes(to) ? `${t} votes, ${f} is being removed` : `${t} is being added`;
  return h('span', { class: 'badge warn', 'data-testid': 'partition-move', title: `A replica moves from node ${f} to node ${t}: ${step}` }, `moving ${f} → ${t}`);
}

/** The replicas of a partition still fetching the retained log before their snapshot, as the answering node knows them. */
function incompleteBadge(p) {
  const nodes = p.incomplete_replicas.map(memberLabel);
  return h(
    'span',
    { class: 'badge warn', 'data-testid': 'partition-incomplete', title: `Replica${nodes.length > 1 ? 's' : ''} on node${nodes.length > 1 ? 's' : ''} ${nodes.join(', ')} still fetch${nodes.length > 1 ? '' : 'es'} the retained log before ${nodes.length > 1 ? 'their' : 'its'} snapshot` },
    `incomplete: ${nodes.join(', ')}`,
  );
}

/** Members this node cannot reach (the replicas on them may still count as in sync for a while). */
function unreachableIds(view) {
  return new Set(view.members.filter((x) => !x.reachable).map((x) => x.id));
}

/** `filter.onlyProblems` outlives the page's redraws: the refresh must not untick what the person ticked. */
function partitionsView(view, filter) {
  if (!Array.isArray(view.partitions)) return h('p', { class: 'muted' }, 'This node does not list partitions.');
  if (view.partitions.length === 0) return h('p', { class: 'muted' }, 'No partitions yet: create an event type.');
  const down = unreachableIds(view);
  const onUnreachable = (p) => p.replicas.some((n) => down.has(nodeOf(n)));
  const onlyProblems = h('input', { type: 'checkbox', 'data-testid': 'only-problems' });
  onlyProblems.checked = filter.onlyProblems;
  const body = h('tbody');
  const render = () => {
    const shown = view.partitions.filter((p) => !onlyProblems.checked || p.under_replicated || p.leader === null || onUnreachable(p));
    body.replaceChildren(
      ...shown.map((p) =>
        h(
          'tr',
          { 'data-key': `${p.event_type}/${p.partition}`, class: p.under_replicated || p.leader === null || onUnreachable(p) ? 'problem' : undefined },
          h('td', {}, link(`/console/event-types/${enc(p.event_type)}`, p.event_type)),
          h('td', {}, p.partition),
          h('td', { 'data-testid': 'partition-leader' }, p.leader === null ? h('span', { class: 'badge bad' }, 'none') : memberLabel(p.leader)),
          h('td', { class: 'num' }, p.term === null ? '-' : fmtNumber(p.term)),
          h('td', { 'data-testid': 'partition-replicas' }, p.replicas.map(memberLabel).join(', ')),
          h('td', {}, h('div', { class: 'replicas', 'data-testid': 'replica-status' }, p.replica_status.map((r) => replicaBadge(r, p.leader, view.members)))),
          h('td', { class: 'num' }, p.commit_index === null ? '-' : fmtNumber(p.commit_index)),
          h(
            'td',
            { 'data-testid': 'partition-state' },
            p.leader === null
              ? h('span', { class: 'badge bad' }, 'leaderless')
              : p.under_replicated
                ? h('span', { class: 'badge bad' }, 'under-replicated')
                : onUnreachable(p)
                  ? h('span', { class: 'badge warn', title: 'This node cannot reach a node holding a replica; the node leading the partition says whether it is under-replicated' }, 'replica unreachable')
                  : h('span', { class: 'badge ok' }, 'ok'),
            ...(p.moving == null ? [] : [' ', moveBadge(p)]),
            ...((p.incomplete_replicas ?? []).length === 0 ? [] : [' ', incompleteBadge(p)]),
          ),
        ),
      ),
    );
  };
  onlyProblems.addEventListener('change', () => {
    filter.onlyProblems = onlyProblems.checked;
    render();
  });
  render();
  return h(
    'div',
    {},
    h('div', { class: 'toolbar' }, h('label', {}, onlyProblems, ' only partitions with a problem (leaderless, under-replicated, a replica on an unreachable node)')),
    h(
      'table',
      { 'data-testid': 'partitions' },
      h('thead', {}, h('tr', {}, ['event type', 'partition', 'leader', 'term', 'replicas', 'replica status', 'commit index', 'state'].map((t) => h('th', {}, t)))),
      body,
    ),
    h(
      'p',
      { class: 'hint' },
      'As node ',
      String(view.id),
      ' knows them: the leader of a partition knows how far each replica acknowledged; another node knows only its own replica ("not known here": open the console of the leader\'s node). A replica is in sync unless it trails the commit index by more than the broker\'s limit or the leader cannot reach its node. An incomplete replica holds the Raft log but still fetches the retained log before its snapshot (after a restart or a move behind the retained log): not a problem by itself, but it gives away the leadership and cannot serve that older log to others until done.',
    ),
  );
}

export async function overviewPage(_params, ctx) {
  const box = h('div', { 'data-testid': 'cluster-overview' });
  const filter = { onlyProblems: false };
  let draws = 0;
  const draw = async () => {
    const view = await get('/cluster');
    const eventTypes = await get('/event-types').catch(() => undefined);
    box.replaceChildren(overviewBody(view, eventTypes, filter));
    // How many answers of GET /cluster the page has shown (tests wait for the next one).
    box.dataset.draws = String(++draws);
  };
  await draw();
  // Reachability and leaders change: the page follows them while it is open.
  const timer = setInterval(() => draw().catch((err) => box.replaceChildren(errorBox(err))), 5000);
  ctx.onCleanup(() => clearInterval(timer));
  return box;
}

function overviewBody(view, eventTypes, filter) {
  const m = view.metadata;
  const leader = view.members.find((x) => x.id === m.leader);
  const hasPartitions = Array.isArray(view.partitions);
  return h(
    'div',
    {},
    h('h1', {}, 'Cluster'),
    h(
      'div',
      { class: 'cards' },
      card('this node', `${view.id}`, 'node-id'),
      card('role', view.role, 'node-role'),
      card('metadata leader', m.leader === null ? 'none' : `${m.leader}`, 'leader'),
      card('term', fmtNumber(m.term), 'term'),
      card('commit / applied', `${fmtNumber(m.commit_index)} / ${fmtNumber(m.applied_index)}`, 'indexes'),
      card('members', `${view.members.filter((x) => x.reachable).length} of ${view.members.length} reachable`, 'member-count'),
      eventTypes === undefined ? null : card('event types', `${eventTypes.length}`, 'event-type-count'),
      hasPartitions ? card('partitions', fmtNumber(view.partitions.length), 'partition-count') : null,
      hasPartitions ? card('under-replicated', fmtNumber(view.under_replicated_partitions), 'under-replicated', view.under_replicated_partitions > 0) : null,
      hasPartitions ? card('leaderless', fmtNumber(view.leaderless_partitions), 'leaderless', view.leaderless_partitions > 0) : null,
      hasPartitions && view.partitions.some((p) => p.moving != null)
        ? card('replica moves in flight', fmtNumber(view.partitions.filter((p) => p.moving != null).length), 'moves-in-flight')
        : null,
      hasPartitions && (view.incomplete_partitions ?? 0) > 0 ? card('with an incomplete replica', fmtNumber(view.incomplete_partitions), 'incomplete-partitions') : null,
      hasPartitions && unreachableIds(view).size > 0
        ? card('with a replica on an unreachable node', fmtNumber(view.partitions.filter((p) => p.replicas.some((n) => unreachableIds(view).has(nodeOf(n)))).length), 'on-unreachable', true)
        : null,
    ),
    m.raft_damaged ? h('div', { class: 'error' }, h('strong', {}, 'This node\'s metadata replica is damaged: '), m.raft_damage ?? 'it lost data it had acknowledged; it votes and leads no more until repaired.') : null,
    h('h2', {}, 'Members'),
    table(
      ['id', 'suffrage', 'HTTP', 'Raft', 'reachable', 'role'],
      view.members.map((x) => [
        x.self ? `${x.id} (this node)` : `${x.id}`,
        x.suffrage,
        x.http_address && !x.self ? h('a', { href: `http://${x.http_address}/console/` }, x.http_address) : x.http_address,
        x.raft_address,
        h('span', { class: `badge ${x.reachable ? 'ok' : 'bad'}` }, x.reachable ? 'reachable' : 'unreachable'),
        x.id === m.leader ? h('span', { class: 'badge ok' }, 'metadata leader') : 'follower',
      ]),
      { 'data-testid': 'members' },
    ),
    h('p', { class: 'muted' }, leader === undefined ? 'No metadata leader is known to this node: metadata writes and reads wait or fail with 503.' : ''),
    h('h2', {}, 'Partitions'),
    partitionsView(view, filter),
  );
}

// ---------------------------------------------------------------- event types

export async function eventTypesPage(_params, ctx) {
  const list = (await get('/event-types')).sort((a, b) => a.name.localeCompare(b.name));
  const q = ctx.query.get('q') ?? '';
  const body = h('tbody');
  const count = h('span', { class: 'muted', 'data-testid': 'shown-count' });
  const render = (text) => {
    const shown = list.filter((e) => text === '' || e.name.toLowerCase().includes(text.toLowerCase()) || e.owning_application.toLowerCase().includes(text.toLowerCase()));
    count.textContent = `${shown.length} of ${list.length}`;
    body.replaceChildren(
      ...shown.map((e) =>
        h(
          'tr',
          { 'data-name': e.name },
          h('td', {}, link(`/console/event-types/${enc(e.name)}`, e.name)),
          h('td', {}, e.category),
          h('td', {}, e.owning_application),
          h('td', {}, e.partition_strategy),
          h('td', {}, e.compatibility_mode),
          h('td', {}, e.schema.version),
          h('td', {}, e.authorization ? 'yes' : ''),
          h('td', {}, e.updated_at),
        ),
      ),
    );
  };
  const search = h('input', {
    type: 'search',
    placeholder: 'search names and owners',
    value: q,
    'data-testid': 'search',
    oninput: (ev) => {
      render(ev.target.value);
      history.replaceState(null, '', ev.target.value === '' ? location.pathname : `${location.pathname}?q=${enc(ev.target.value)}`);
    },
  });
  render(q);
  return h(
    'div',
    {},
    h('h1', {}, 'Event types'),
    h('div', { class: 'toolbar' }, search, count),
    h(
      'table',
      { 'data-testid': 'event-types' },
      h('thead', {}, h('tr', {}, ['name', 'category', 'owner', 'partitioning', 'compatibility', 'version', 'authorization', 'updated'].map((t) => h('th', {}, t)))),
      body,
    ),
  );
}

/** Line diff (longest common subsequence) of two texts: [{op: ' ' | '+' | '-', line}]. */
export function diffLines(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: ' ', line: x[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', line: x[i++] });
    else out.push({ op: '+', line: y[j++] });
  }
  while (i < n) out.push({ op: '-', line: x[i++] });
  while (j < m) out.push({ op: '+', line: y[j++] });
  return out;
}

function pretty(schemaText) {
  try {
    return JSON.stringify(JSON.parse(schemaText), null, 2);
  } catch {
    return schemaText;
  }
}

function authorizationView(auth) {
  if (auth === undefined) return h('p', { class: 'muted' }, 'No authorization section: every caller with the scopes may read and write.');
  const attrs = (list) => (list.length === 0 ? '-' : list.map((a) => (a.data_type === '*' && a.value === '*' ? 'everyone (*)' : `${a.data_type}: ${a.value}`)).join(', '));
  return fields([
    ['admins', attrs(auth.admins)],
    ['readers', attrs(auth.readers)],
    ['writers', attrs(auth.writers)],
  ], { 'data-testid': 'authorization' });
}

export async function eventTypePage({ name }) {
  const et = await get(`/event-types/${enc(name)}`);
  const schemas = (await get(`/event-types/${enc(name)}/schemas?limit=1000`)).items;
  let partitions;
  let partitionError;
  try {
    partitions = await get(`/event-types/${enc(name)}/partitions`);
  } catch (err) {
    partitionError = err;
  }
  const versions = schemas.map((s) => s.version);
  const pickA = h('select', { 'data-testid': 'diff-a' }, versions.map((v) => h('option', { value: v }, v)));
  const pickB = h('select', { 'data-testid': 'diff-b' }, versions.map((v) => h('option', { value: v }, v)));
  pickB.value = versions[0];
  pickA.value = versions[1] ?? versions[0];
  const diffBox = h('div', { class: 'diff', 'data-testid': 'schema-diff' });
  const showDiff = () => {
    const a = schemas.find((s) => s.version === pickA.value);
    const b = schemas.find((s) => s.version === pickB.value);
    diffBox.replaceChildren(
      ...diffLines(pretty(a.schema), pretty(b.schema)).map((d) => h('div', { class: d.op === '+' ? 'add' : d.op === '-' ? 'del' : '' }, `${d.op} ${d.line}`)),
    );
  };
  pickA.addEventListener('change', showDiff);
  pickB.addEventListener('change', showDiff);
  showDiff();

  return h(
    'div',
    {},
    h('h1', {}, 'Event type ', h('code', {}, et.name)),
    h('div', { class: 'toolbar' }, link(`/console/browser/${enc(et.name)}`, 'Browse events'), ' · ', link(`/console/publish/${enc(et.name)}`, 'Publish a test event'), ' · ', link(`/console/subscriptions?event_type=${enc(et.name)}`, 'Subscriptions')),
    fields([
      ['category', et.category],
      ['owning application', et.owning_application],
      ['partition strategy', `${et.partition_strategy}${et.partition_key_fields ? ` (${et.partition_key_fields.join(', ')})` : ''}`],
      ['enrichment', (et.enrichment_strategies ?? []).join(', ') || '-'],
      ['compatibility mode', et.compatibility_mode],
      ['schema version', et.schema.version],
      ['retention', et.options?.retention_time === undefined ? '-' : `${fmtNumber(et.options.retention_time)} ms (${(et.options.retention_time / 3_600_000).toFixed(1)} h)`],
      ['default statistic', et.default_statistic ? JSON.stringify(et.default_statistic) : '-'],
      ['created', et.created_at],
      ['updated', et.updated_at],
    ], { 'data-testid': 'event-type-fields' }),
    h('h2', {}, 'Partitions'),
    partitions === undefined
      ? errorBox(partitionError)
      : table(
          ['partition', 'oldest offset', 'newest offset', ''],
          partitions.map((p) => [p.partition, h('code', {}, p.oldest_available_offset), h('code', {}, p.newest_available_offset), link(`/console/browser/${enc(et.name)}?partition=${enc(p.partition)}`, 'browse')]),
          { 'data-testid': 'partitions' },
        ),
    h('h2', {}, 'Authorization'),
    authorizationView(et.authorization),
    h('h2', {}, 'Schema ', h('span', { class: 'muted' }, `version ${et.schema.version}`)),
    h('pre', { class: 'schema', 'data-testid': 'schema-current' }, pretty(et.schema.schema)),
    h('h2', {}, 'Schema versions'),
    table(['version', 'created'], schemas.map((s) => [s.version, s.created_at]), { 'data-testid': 'schema-versions' }),
    h('h2', {}, 'Schema diff'),
    h('div', { class: 'toolbar' }, 'from ', pickA, ' to ', pickB),
    diffBox,
  );
}

// ---------------------------------------------------------------- event browser

function eventView(e, partition, offset, live) {
  const md = e.metadata ?? {};
  return h(
    'div',
    { class: `event${live ? ' live' : ''}`, 'data-testid': 'event' },
    h(
      'div',
      { class: 'meta' },
      h('span', {}, 'partition ', h('b', {}, partition)),
      h('span', {}, 'offset ', h('code', {}, offset)),
      md.eid ? h('span', {}, 'eid ', h('code', {}, md.eid)) : null,
      md.occurred_at ? h('span', {}, 'occurred ', md.occurred_at) : null,
      md.received_at ? h('span', {}, 'received ', md.received_at) : null,
      md.version ? h('span', {}, 'schema ', md.version) : null,
      md.flow_id ? h('span', {}, 'flow ', h('code', {}, md.flow_id)) : null,
    ),
    h('pre', {}, JSON.stringify(e, null, 2)),
  );
}

async function eventTypeSelect(current, onChange, testid) {
  const names = (await get('/event-types')).map((e) => e.name).sort();
  const sel = h('select', { 'data-testid': testid, onchange: (ev) => onChange(ev.target.value) }, h('option', { value: '' }, 'choose an event type'), names.map((n) => h('option', { value: n }, n)));
  sel.value = current ?? '';
  return sel;
}

export async function browserPage({ name }, ctx) {
  const select = await eventTypeSelect(name, (n) => ctx.navigate(`/console/browser/${enc(n)}`), 'browser-event-type');
  if (name === undefined) return h('div', {}, h('h1', {}, 'Event browser'), h('div', { class: 'toolbar' }, select));
  const partitions = await get(`/event-types/${enc(name)}/partitions`);
  const q = ctx.query;
  const partSel = h('select', { 'data-testid': 'browser-partition' }, h('option', { value: '*' }, 'all partitions'), partitions.map((p) => h('option', { value: p.partition }, `partition ${p.partition}`)));
  partSel.value = q.get('partition') ?? '*';
  const mode = h('select', { 'data-testid': 'browser-mode' }, h('option', { value: 'newest' }, 'newest events'), h('option', { value: 'cursor' }, 'events after offset'));
  mode.value = q.get('mode') ?? 'newest';
  const count = h('input', { type: 'number', min: '1', max: '1000', value: q.get('n') ?? '20', style: 'width:6em', 'data-testid': 'browser-count' });
  const offset = h('input', { type: 'text', placeholder: 'BEGIN or an offset', value: q.get('offset') ?? 'BEGIN', style: 'width:20em', 'data-testid': 'browser-offset' });
  const status = h('span', { class: 'muted', 'data-testid': 'browser-status' });
  const list = h('div', { 'data-testid': 'events' });
  let follow;

  const chosen = () => (partSel.value === '*' ? partitions.map((p) => p.partition) : [partSel.value]);

  const read = async () => {
    list.replaceChildren();
    const n = Math.max(1, Math.min(1000, Number(count.value) || 20));
    let starts;
    let total;
    if (mode.value === 'newest') {
      // How many events each partition holds, then a cursor n events before its newest.
      const lag = await api('POST', `/event-types/${enc(name)}/cursors-lag`, chosen().map((p) => ({ partition: p, offset: 'BEGIN' }))).then((r) => r.body);
      starts = [];
      total = 0;
      for (const p of lag) {
        const k = Math.min(n, p.unconsumed_events ?? 0);
        if (k === 0) continue;
        total += k;
        const start = k === p.unconsumed_events ? 'BEGIN' : (await api('POST', `/event-types/${enc(name)}/shifted-cursors`, [{ partition: p.partition, offset: p.newest_available_offset, shift: -k }])).body[0].offset;
        starts.push({ partition: p.partition, offset: start });
      }
    } else {
      starts = chosen().map((p) => ({ partition: p, offset: offset.value.trim() || 'BEGIN' }));
      total = n * starts.length;
    }
    if (starts.length === 0) {
      status.textContent = 'No events in the chosen partitions.';
      return;
    }
    status.textContent = 'Reading...';
    let got = 0;
    const query = `batch_limit=1&stream_limit=${total}&batch_flush_timeout=1&stream_timeout=3`;
    const perPartition = new Map();
    await stream(`/event-types/${enc(name)}/events?${query}`, {
      headers: { 'X-Svc-Cursors': JSON.stringify(starts) },
      signal: ctx.signal,
      onLine: (line) => {
        for (const e of line.events ?? []) {
          const seen = perPartition.get(line.cursor.partition) ?? 0;
          if (mode.value === 'cursor' && seen >= n) continue;
          perPartition.set(line.cursor.partition, seen + 1);
          list.append(eventView(e, line.cursor.partition, line.cursor.offset, false));
          got++;
        }
      },
    });
    status.textContent = `${got} event${got === 1 ? '' : 's'} read.`;
  };

  const followButton = h('button', { type: 'button', 'data-testid': 'follow' }, 'Follow live');
  followButton.addEventListener('click', () => {
    if (follow !== undefined) {
      follow.abort();
      return;
    }
    follow = new AbortController();
    const stop = () => follow?.abort();
    ctx.signal.addEventListener('abort', stop);
    followButton.textContent = 'Stop following';
    status.textContent = 'Following: new events appear at the top.';
    list.dataset.following = 'true';
    const query = 'batch_limit=1&batch_flush_timeout=5';
    // Without X-Svc-Cursors the stream starts at the newest event of every partition; for one partition, its newest.
    const headers = partSel.value === '*' ? {} : { 'X-Svc-Cursors': JSON.stringify([{ partition: partSel.value, offset: partitions.find((p) => p.partition === partSel.value).newest_available_offset }]) };
    stream(`/event-types/${enc(name)}/events?${query}`, {
      headers,
      signal: follow.signal,
      onLine: (line) => {
        for (const e of line.events ?? []) list.prepend(eventView(e, line.cursor.partition, line.cursor.offset, true));
      },
    })
      .catch((err) => list.prepend(errorBox(err)))
      .finally(() => {
        follow = undefined;
        followButton.textContent = 'Follow live';
        delete list.dataset.following;
        if (!ctx.signal.aborted) status.textContent = 'Stopped following.';
      });
  });

  const readButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'read' }, 'Read');
  readButton.addEventListener('click', () => read().catch((err) => list.replaceChildren(errorBox(err))));
  const out = h(
    'div',
    {},
    h('h1', {}, 'Event browser'),
    h('div', { class: 'toolbar' }, select, partSel, mode, count, offset, readButton, followButton),
    h('p', { class: 'hint' }, 'Newest events: the last N of each chosen partition, in log order. After offset: N events per partition after the given offset (offsets are exclusive; BEGIN is before the oldest).'),
    status,
    list,
  );
  if (q.get('partition') !== null || q.get('mode') !== null) void read().catch((err) => list.replaceChildren(errorBox(err)));
  return out;
}

// ---------------------------------------------------------------- publish a test event

/** An example event from the event type's schema: required properties with placeholder values. */
export function exampleEvent(et) {
  let schema = {};
  try {
    schema = JSON.parse(et.schema.schema);
  } catch {
    // an unparsable schema gets an empty example
  }
  const sample = (s, depth = 0) => {
    if (s === undefined || depth > 4) return null;
    if (s.enum) return s.enum[0];
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (type === 'object' || s.properties) {
      const o = {};
      for (const k of s.required ?? Object.keys(s.properties ?? {}).slice(0, 3)) o[k] = sample(s.properties?.[k], depth + 1);
      return o;
    }
    if (type === 'array') return [];
    if (type === 'integer' || type === 'number') return 0;
    if (type === 'boolean') return false;
    if (s.format === 'date-time') return new Date().toISOString();
    return 'text';
  };
  const metadata = { eid: uuid(), occurred_at: new Date().toISOString() };
  if (et.category === 'data') return { metadata, data_op: 'C', data_type: et.name, data: sample(schema) ?? {} };
  if (et.category === 'business') return { ...(sample(schema) ?? {}), metadata };
  return sample(schema) ?? {};
}

export async function publishPage({ name }, ctx) {
  const select = await eventTypeSelect(name, (n) => ctx.navigate(`/console/publish/${enc(n)}`), 'publish-event-type');
  if (name === undefined) return h('div', {}, h('h1', {}, 'Publish a test event'), h('div', { class: 'toolbar' }, select));
  const et = await get(`/event-types/${enc(name)}`);
  const text = h('textarea', { 'data-testid': 'publish-body', spellcheck: 'false' });
  text.value = JSON.stringify([exampleEvent(et)], null, 2);
  const fill = h('input', { type: 'checkbox', checked: true, 'data-testid': 'publish-fill' });
  const result = h('div', { 'data-testid': 'publish-result' });
  const button = h('button', { type: 'button', class: 'primary', 'data-testid': 'publish' }, 'Publish');
  button.addEventListener('click', async () => {
    result.replaceChildren();
    let events;
    try {
      events = JSON.parse(text.value);
    } catch (err) {
      result.append(h('div', { class: 'error' }, 'Not JSON: ', err.message));
      return;
    }
    if (!Array.isArray(events)) events = [events];
    if (fill.checked && et.category !== 'undefined') {
      events = events.map((e) => (e && typeof e === 'object' ? { ...e, metadata: { eid: uuid(), occurred_at: new Date().toISOString(), ...(e.metadata ?? {}) } } : e));
    }
    button.disabled = true;
    try {
      await api('POST', `/event-types/${enc(name)}/events`, events);
      result.append(h('div', { class: 'success' }, `Published ${events.length} event${events.length === 1 ? '' : 's'}: every event is durably stored. `, link(`/console/browser/${enc(name)}?mode=newest&n=${events.length}`, 'See them')));
    } catch (err) {
      if (Array.isArray(err.problem)) {
        result.append(
          h('div', { class: 'error' }, h('strong', {}, err.status === 422 ? 'Nothing was published: ' : 'Some events were not published: '), 'each event with what failed.'),
          h(
            'ol',
            { class: 'items', start: '0', 'data-testid': 'publish-items' },
            err.problem.map((item) =>
              h('li', { class: item.publishing_status }, h('b', {}, item.publishing_status), item.step ? ` at ${item.step}` : '', item.eid ? ` (${item.eid})` : '', item.detail ? `: ${item.detail}` : ''),
            ),
          ),
        );
      } else result.append(errorBox(err));
    } finally {
      button.disabled = false;
    }
  });
  return h(
    'div',
    {},
    h('h1', {}, 'Publish a test event'),
    h('div', { class: 'toolbar' }, select, link(`/console/event-types/${enc(name)}`, 'event type details')),
    h('p', { class: 'hint' }, `A JSON array of events (or one event) of ${et.category} event type ${et.name}. A validation failure rejects the whole batch and shows what failed, per event.`),
    text,
    h('div', { class: 'toolbar' }, h('label', {}, fill, ' fill in metadata.eid and occurred_at where absent'), button),
    result,
  );
}
