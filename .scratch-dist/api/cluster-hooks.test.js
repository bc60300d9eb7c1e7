// Goal (issue 10, "Routing decisions are made on the raw URL"): the cluster hooks decide on the route
// fastify matched, never on the raw URL. The router decodes percent-escapes, so a raw URL such as
// `POST /event-types/x/%74imelines` reaches the timelines route: on a multi-node cluster it must get the
// same 503 as `/timelines` (a switch on one node would split the partitions' data), and a metadata
// route reached as `/%65vent-types/...` must wait for the read barrier like any other.
// Method: a fastify app with the hooks and stand-in routes of the same patterns as the real ones, over
// a ClusterPort that counts read barriers and cannot switch timelines; requests through inject().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { installClusterHooks } from './cluster-hooks.js';
async function appWithHooks() {
    let barriers = 0;
    const handled = [];
    const cluster = {
        view: () => ({}),
        readBarrier: () => {
            barriers++;
            return Promise.resolve();
        },
        switchesTimelines: () => false,
        cursorCatchUpMs: () => 0,
    };
    const app = Fastify();
    installClusterHooks(app, { cluster });
    for (const [method, url] of [
        ['POST', '/event-types/:name/timelines'],
        ['GET', '/event-types/:name/timelines'],
        ['DELETE', '/event-types/:name/timelines/:id'],
        ['POST', '/event-types/:name/events'],
        ['GET', '/event-types/:name'],
        ['GET', '/subscriptions/:id'],
        ['POST', '/settings/features'],
        ['GET', '/settings/blacklist'],
        ['GET', '/health'],
    ]) {
        app.route({ method, url, handler: async () => {
                handled.push(`${method} ${url}`);
                return {};
            } });
    }
    await app.ready();
    return { app, barriers: () => barriers, handled };
}
test('a timeline switch on a multi-node cluster is 503 however its URL is written; listing timelines is served', async () => {
    const { app, handled } = await appWithHooks();
    try {
        for (const url of ['/event-types/x/timelines', '/event-types/x/%74imelines', '/%65vent-types/x/timelines', '/event-types/%78/timelines?a=1', '/event-types/x%2Fy/timelines']) {
            const r = await app.inject({ method: 'POST', url, payload: {} });
            assert.equal(r.statusCode, 503, `POST ${url}: ${r.body}`);
            assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
        }
        const del = await app.inject({ method: 'DELETE', url: '/event-types/x/%74imelines/t1' });
        assert.equal(del.statusCode, 503, del.body);
        assert.deepEqual(handled, [], 'no switch reached its handler');
        assert.equal((await app.inject({ method: 'GET', url: '/event-types/x/%74imelines' })).statusCode, 200);
        assert.equal((await app.inject({ method: 'POST', url: '/event-types/x/%65vents', payload: [] })).statusCode, 200, 'publishing is served on every node');
    }
    finally {
        await app.close();
    }
});
test('metadata routes wait for the read barrier however their URL is written; feature writes and other routes do not', async () => {
    const { app, barriers } = await appWithHooks();
    try {
        const cases = [
            ['GET', '/event-types/x', 1],
            ['GET', '/%65vent-types/x', 1],
            ['GET', '/%73ubscriptions/s1', 1],
            ['GET', '/%73ettings/blacklist', 1],
            ['POST', '/event-types/x/%65vents', 1],
            ['POST', '/settings/features', 0],
            ['POST', '/%73ettings/features', 0],
            ['GET', '/health', 0],
        ];
        for (const [method, url, more] of cases) {
            const before = barriers();
            const r = await app.inject({ method: method, url, ...(method === 'POST' ? { payload: {} } : {}) });
            assert.equal(r.statusCode, 200, `${method} ${url}: ${r.body}`);
            assert.equal(barriers() - before, more, `${method} ${url}: read barriers`);
        }
    }
    finally {
        await app.close();
    }
});
//# sourceMappingURL=cluster-hooks.test.js.map