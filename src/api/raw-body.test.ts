// Goal: the body reader hands over a body that arrived in one chunk as that chunk (no copy), joins a body
// of several chunks in order, and answers what fastify's reader answered: 413 for a Content-Length or a
// body above the route's limit (and for a decoded stream that received more than the limit), 400 for a
// length that is not the Content-Length and for a stream error without a status of its own.
// Method: readRawBody over a PassThrough standing for the request (or the decoded body), with a request
// carrying only what the reader reads (headers, routeOptions.bodyLimit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { readRawBody } from './raw-body.js';

function requestOf(headers: Record<string, string>, bodyLimit = 100): FastifyRequest {
  return { headers, routeOptions: { bodyLimit } } as unknown as FastifyRequest;
}

function read(request: FastifyRequest, chunks: (Buffer | Error)[], payload = new PassThrough()): Promise<{ err: Error | null; body?: Buffer }> {
  return new Promise((resolve) => {
    readRawBody(request, payload, (err, body) => resolve({ err, body }));
    for (const c of chunks) {
      if (c instanceof Error) payload.destroy(c);
      else payload.write(c);
    }
    if (!chunks.some((c) => c instanceof Error)) payload.end();
  });
}

test('a body of one chunk is that chunk, not a copy; one of several chunks is joined in order', async () => {
  const one = Buffer.from('[{"a":1}]');
  const r1 = await read(requestOf({ 'content-length': String(one.length) }), [one]);
  assert.equal(r1.err, null);
  assert.equal(r1.body, one, 'the chunk itself');

  const parts = [Buffer.from('[{"a"'), Buffer.from(':1},'), Buffer.from('{"b":2}]')];
  const r2 = await read(requestOf({ 'transfer-encoding': 'chunked' }), parts);
  assert.equal(r2.err, null);
  assert.equal(r2.body?.toString(), '[{"a":1},{"b":2}]');
});

test('over the limit: by Content-Length before reading, by the bytes read, by the bytes a decoder received', async () => {
  const byHeader = await read(requestOf({ 'content-length': '101' }), []);
  assert.equal((byHeader.err as { code?: string }).code, 'FST_ERR_CTP_BODY_TOO_LARGE');
  assert.equal((byHeader.err as { statusCode?: number }).statusCode, 413);

  const byBytes = await read(requestOf({ 'transfer-encoding': 'chunked' }), [Buffer.alloc(60), Buffer.alloc(60)]);
  assert.equal((byBytes.err as { code?: string }).code, 'FST_ERR_CTP_BODY_TOO_LARGE');

  const decoded = Object.assign(new PassThrough(), { receivedEncodedLength: 101 });
  const byWire = await read(requestOf({ 'transfer-encoding': 'chunked' }), [Buffer.alloc(10)], decoded);
  assert.equal((byWire.err as { code?: string }).code, 'FST_ERR_CTP_BODY_TOO_LARGE');
});

test('a length that is not the Content-Length is 400; a stream error is 400 unless it has a 4xx of its own', async () => {
  const short = await read(requestOf({ 'content-length': '10' }), [Buffer.alloc(9)]);
  assert.equal((short.err as { code?: string }).code, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH');
  assert.equal((short.err as { statusCode?: number }).statusCode, 400);

  // A decoded body is measured by what came over the wire, as fastify's reader does.
  const decoded = Object.assign(new PassThrough(), { receivedEncodedLength: 10 });
  const ok = await read(requestOf({ 'content-length': '10' }), [Buffer.alloc(40)], decoded);
  assert.equal(ok.err, null);
  assert.equal(ok.body?.length, 40);

  const plain = await read(requestOf({ 'transfer-encoding': 'chunked' }), [Buffer.alloc(3), new Error('aborted')]);
  assert.equal((plain.err as { statusCode?: number }).statusCode, 400);
  const own = await read(requestOf({ 'transfer-encoding': 'chunked' }), [Object.assign(new Error('too big'), { statusCode: 413 })]);
  assert.equal((own.err as { statusCode?: number }).statusCode, 413);
});
