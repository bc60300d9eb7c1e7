/**
 * X-Flow-Id (compatibility.md): echoed on every response; when absent, 24 random alphanumerics are
 * generated and used in logs and metadata.flow_id. An over-long or non-printable flow id is replaced,
 * so a client cannot bloat every log line or inject control characters into them.
 */
import { randomFillSync } from 'node:crypto';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const flowIdLengthMax = 256;
const flowIdLength = 24;

/**
 * Random bytes for the flow ids of the next 256 requests, drawn in one call: every request without
 * an X-Flow-Id gets one, and a call into the CSPRNG per request (randomBytes(24)) was one of the larger
 * costs of a small publish. A flow id is a trace id, not a secret: drawing ahead changes nothing.
 */
const pool = Buffer.alloc(flowIdLength * 256);
let used = pool.length;

export function generateFlowId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  let s = '';
  for (let i = used; i < used + flowIdLength; i++) s += alphabet[pool[i]! % alphabet.length];
  used += flowIdLength;
  return s;
}

export function flowIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  if (v === undefined || v.length === 0 || v.length > flowIdLengthMax || !/^[\x21-\x7e]+$/.test(v)) return generateFlowId();
  return v;
}
