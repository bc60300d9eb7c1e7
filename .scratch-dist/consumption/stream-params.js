/**
 * Stream parameters (interface.md, "Low-level stream" and the subscription stream) parsed from the
 * query string into milliseconds and counts, with the rules that make a combination invalid (422).
 */
import { problems } from '../core/problem.js';
import { commitTimeoutSecondsMax, streamBatchLimitMax, streamSecondsMax } from '../core/limits.js';
function intParam(q, name, dflt, max) {
    const raw = q[name];
    if (raw === undefined || raw === '')
        return dflt;
    const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
    if (!/^-?\d+$/.test(text.trim())) {
        throw problems.invalidStreamParameters(`Query parameter ${name} must be an integer, got "${text}"`);
    }
    const n = Number(text);
    if (n < 0)
        throw problems.invalidStreamParameters(`Query parameter ${name} must not be negative, got ${n}`);
    if (n > max)
        throw problems.invalidStreamParameters(`Query parameter ${name} must be at most ${max}, got ${n}`);
    return n;
}
export function parseStreamParams(q) {
    const batchLimit = intParam(q, 'batch_limit', 1, streamBatchLimitMax);
    if (batchLimit < 1)
        throw problems.invalidStreamParameters('batch_limit must be at least 1');
    // "0 or undefined means 30".
    const flushS = intParam(q, 'batch_flush_timeout', 30, streamSecondsMax) || 30;
    const streamLimit = intParam(q, 'stream_limit', 0, Number.MAX_SAFE_INTEGER);
    const streamTimeoutS = intParam(q, 'stream_timeout', 0, streamSecondsMax);
    const streamKeepAliveLimit = intParam(q, 'stream_keep_alive_limit', 0, Number.MAX_SAFE_INTEGER);
    if (streamLimit !== 0 && streamLimit < batchLimit) {
        throw problems.invalidStreamParameters(`stream_limit (${streamLimit}) must be 0 (unlimited) or at least batch_limit (${batchLimit})`);
    }
    if (streamTimeoutS !== 0 && streamTimeoutS < flushS) {
        throw problems.invalidStreamParameters(`stream_timeout (${streamTimeoutS}) must be 0 (unlimited) or at least batch_flush_timeout (${flushS})`);
    }
    return {
        batchLimit,
        batchFlushTimeoutMs: flushS * 1000,
        streamLimit,
        streamTimeoutMs: streamTimeoutS * 1000,
        streamKeepAliveLimit,
    };
}
export function parseSubscriptionStreamParams(q) {
    const base = parseStreamParams(q);
    const maxUncommittedEvents = intParam(q, 'max_uncommitted_events', 10, 2_147_483_647);
    if (maxUncommittedEvents < 1)
        throw problems.invalidStreamParameters('max_uncommitted_events must be at least 1');
    const commitTimeoutS = intParam(q, 'commit_timeout', commitTimeoutSecondsMax, commitTimeoutSecondsMax) || commitTimeoutSecondsMax;
    return { ...base, maxUncommittedEvents, commitTimeoutMs: commitTimeoutS * 1000 };
}
//# sourceMappingURL=stream-params.js.map