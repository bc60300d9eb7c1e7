// The console's shell: a router over /console/... addresses (each page has its own address, so a
// link or a reload shows the same view), the token form, and the 401/403 messages.
import { onAuthError, setToken, token } from './api.js';
import { errorBox, h } from './dom.js';
import { browserPage, eventTypePage, eventTypesPage, overviewPage, publishPage } from './pages.js';
import { metricsPage, settingsPage, subscriptionPage, subscriptionsPage } from './admin.js';

const routes = [
  [/^\/console\/?$/, overviewPage, 'overview'],
  [/^\/console\/event-types\/?$/, eventTypesPage, 'event-types'],
  [/^\/console\/event-types\/(?<name>[^/]+)$/, eventTypePage, 'event-types'],
  [/^\/console\/browser(?:\/(?<name>[^/]+))?\/?$/, browserPage, 'browser'],
  [/^\/console\/publish(?:\/(?<name>[^/]+))?\/?$/, publishPage, 'publish'],
  [/^\/console\/subscriptions\/?$/, subscriptionsPage, 'subscriptions'],
  [/^\/console\/subscriptions\/(?<id>[^/]+)$/, subscriptionPage, 'subscriptions'],
  [/^\/console\/settings\/?$/, settingsPage, 'settings'],
  [/^\/console\/metrics\/?$/, metricsPage, 'metrics'],
];

const view = document.getElementById('view');
const banner = document.getElementById('banner');
const authBox = document.getElementById('auth');
const tokenInput = document.getElementById('token-input');
let current; // {abort: AbortController, cleanups: []}

function showAuth(show) {
  authBox.hidden = !show;
  if (show) tokenInput.focus();
}

onAuthError((err) => {
  if (err.status === 401) {
    banner.textContent = token() === '' ? 'This broker requires authentication: enter a bearer token.' : 'The broker did not accept the token (401): enter another one.';
    banner.hidden = false;
    showAuth(true);
  }
});

async function render() {
  current?.abort.abort();
  for (const fn of current?.cleanups ?? []) fn();
  const abort = new AbortController();
  const cleanups = [];
  current = { abort, cleanups };
  const path = location.pathname;
  const match = routes.map(([re, page, nav]) => ({ m: re.exec(path), page, nav })).find((r) => r.m !== null);
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.nav === match?.nav);
  if (match === undefined) {
    view.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No page at ', h('code', {}, path), '.'));
    return;
  }
  const params = Object.fromEntries(Object.entries(match.m.groups ?? {}).filter(([, v]) => v !== undefined).map(([k, v]) => [k, decodeURIComponent(v)]));
  const ctx = { signal: abort.signal, query: new URLSearchParams(location.search), navigate, onCleanup: (fn) => cleanups.push(fn) };
  view.dataset.loading = 'true';
  try {
    const node = await match.page(params, ctx);
    if (abort.signal.aborted) return;
    view.replaceChildren(node);
  } catch (err) {
    if (abort.signal.aborted) return;
    view.replaceChildren(errorBox(err));
  } finally {
    if (!abort.signal.aborted) delete view.dataset.loading;
  }
}

export function navigate(href) {
  history.pushState(null, '', href);
  void render();
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest?.('a[data-link]');
  if (a === null || a === undefined || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', () => void render());

document.getElementById('token-button').addEventListener('click', () => showAuth(authBox.hidden));
document.getElementById('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken(tokenInput.value.trim());
  tokenInput.value = '';
  banner.hidden = true;
  showAuth(false);
  void render();
});
document.getElementById('token-clear').addEventListener('click', () => {
  setToken('');
  banner.hidden = true;
  void render();
});

void render();
