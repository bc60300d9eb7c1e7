import { startBroker, rssBytes } from '../../dist-bench/bench/lib/broker.js';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';
const b = await startBroker({});
await fetch(b.url + '/event-types', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('x', 'hash')) }).then(r => r.text());
const pool = publishPool(b.url, 4); const s = [];
const t = setInterval(() => s.push((rssBytes(b.pid) / 1e6).toFixed(0)), 5000);
const r = await closedLoop({ pool, path: '/event-types/x/events', bodies: batchBodies(1000, 24, 0), eventsPerBody: 1000, producers: 4, warmupMs: 0, durationMs: 50000 });
clearInterval(t); console.log('ev/s', Math.round(r.eventsPerS), 'RSS MB every 5 s:', s.join(' ')); await pool.close(); await b.stop();
