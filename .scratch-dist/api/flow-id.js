/**
 * X-Flow-Id (compatibility.md): echoed on every response; when absent, 24 random alphanumerics are
 * generated and used in logs and metadata.flow_id. An over-long or non-printable flow id is replaced,
 * so a client cannot bloat every log line or inject control characters into them.
 */
import { randomBytes } from 'node:crypto';
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const flowIdLengthMax = 256;
export function generateFlowId() {
    const bytes = randomBytes(24);
    let s = '';
    for (let i = 0; i < 24; i++)
        s += alphabet[bytes[i] % alphabet.length];
    return s;
}
export function flowIdFrom(header) {
    const v = Array.isArray(header) ? header[0] : header;
    if (v === undefined || v.length === 0 || v.length > flowIdLengthMax || !/^[\x21-\x7e]+$/.test(v))
        return generateFlowId();
    return v;
}
//# sourceMappingURL=flow-id.js.map