// Goal: the check broker-harness's call() runs on every answer of the HTTP tests finds what makes an
// answer differ from the OpenAPI document: a status the operation does not list, another media type,
// a body that does not match, a field the document does not describe, a bad line of a stream; and it
// leaves alone what the document does not name (the console, unknown routes).
// Method: violations() against a small document written here, with answers made by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closed, compileDocument, violations, type OpenApiDoc } from './openapi-conformance.js';

const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
const doc: OpenApiDoc = {
  components: {
    schemas: {
      Problem: { type: 'object', properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } }, required: ['title', 'status'] },
      Item: { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' }, payload: { type: 'object', properties: {} } }, required: ['name'] },
    },
  },
  paths: {
    '/items': { get: { responses: { '200': { content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } } } } }, '404': { content: problem } } } },
    '/items/{id}': { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } } }, delete: { responses: { '204': {} } } },
    '/items/{id}/events': { get: { responses: { '200': { content: { 'application/x-json-stream': { schema: { $ref: '#/components/schemas/Item' } } } } } } },
    '/items/special': { get: { responses: { '200': { content: { 'text/plain': { schema: { type: 'string' } } } } } } },
  },
};
const compiled = compileDocument(doc);

function answer(method: string, path: string, status: number, contentType: string | null, body: unknown) {
  return { method, path, status, contentType, text: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body) };
}

test('a conforming answer has no violations; query strings and charset parameters do not matter', () => {
  assert.deepEqual(violations(compiled, answer('GET', '/items?limit=3', 200, 'application/json; charset=utf-8', [{ name: 'a', n: 1 }])), []);
  assert.deepEqual(violations(compiled, answer('GET', '/items', 404, 'application/problem+json', { type: 'x', title: 'Not Found', status: 404, detail: 'no' })), []);
  assert.deepEqual(violations(compiled, answer('DELETE', '/items/7', 204, null, undefined)), []);
});

test('a status the operation does not list', () => {
  const v = violations(compiled, answer('GET', '/items/7', 503, 'application/problem+json', { title: 'Service Unavailable', status: 503 }));
  assert.equal(v.length, 1);
  assert.match(v[0]!, /GET \/items\/\{id\} -> 503: status not documented \(documented: 200\)/);
});

test('another media type, a body where none is documented, and a body that is not JSON', () => {
  assert.match(violations(compiled, answer('GET', '/items/7', 200, 'text/html', '<p>'))[0]!, /media type 'text\/html' not documented/);
  assert.match(violations(compiled, answer('DELETE', '/items/7', 204, 'application/json', { name: 'x' }))[0]!, /documented without a body/);
  assert.match(violations(compiled, answer('GET', '/items/7', 200, 'application/json', '{broken'))[0]!, /not JSON/);
});

test('a body that does not match: a missing required field, a wrong type', () => {
  assert.match(violations(compiled, answer('GET', '/items/7', 200, 'application/json', { n: 1 }))[0]!, /does not match: .*name/);
  assert.match(violations(compiled, answer('GET', '/items', 200, 'application/json', [{ name: 'a', n: 'one' }]))[0]!, /does not match: .*integer/);
});

test('a field the document does not describe, also nested; objects without listed properties stay open', () => {
  assert.match(violations(compiled, answer('GET', '/items/7', 200, 'application/json', { name: 'a', extra: true }))[0]!, /fields the document does not describe: \/extra/);
  assert.match(violations(compiled, answer('GET', '/items', 200, 'application/json', [{ name: 'a' }, { name: 'b', more: 1 }]))[0]!, /fields the document does not describe: \/1\/more/);
  assert.deepEqual(violations(compiled, answer('GET', '/items/7', 200, 'application/json', { name: 'a', payload: { anything: [1] } })), []);
  // The document itself is not changed by the check.
  assert.equal('additionalProperties' in (doc.components as { schemas: { Item: object } }).schemas.Item, false);
  assert.equal((closed(doc.components) as { schemas: { Item: { additionalProperties: boolean } } }).schemas.Item.additionalProperties, false);
});

test('every line of a stream is checked', () => {
  const lines = [{ name: 'a' }, { name: 'b' }, { n: 3 }].map((l) => JSON.stringify(l)).join('\n') + '\n';
  const v = violations(compiled, answer('GET', '/items/7/events', 200, 'application/x-json-stream', lines));
  assert.equal(v.length, 1);
  assert.match(v[0]!, /\{"n":3\} does not match/);
});

test('the most literal template wins; paths and methods the document does not name are left alone', () => {
  assert.deepEqual(violations(compiled, answer('GET', '/items/special', 200, 'text/plain', 'hello')), []);
  assert.deepEqual(violations(compiled, answer('GET', '/console/', 200, 'text/html', '<html>')), []);
  assert.deepEqual(violations(compiled, answer('POST', '/items', 404, 'application/problem+json', { title: 'Not Found', status: 404 })), []);
  assert.deepEqual(violations(compiled, answer('GET', '/items/7/other', 404, 'text/plain', 'x')), []);
});
