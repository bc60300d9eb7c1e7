import { isProblem, Problem, problems } from '../core/problem.js';
export const problemContentType = 'application/problem+json';
export function sendProblem(reply, problem) {
    return reply.code(problem.status).type(problemContentType).send(JSON.stringify(problem.toJSON()));
}
/** Maps any thrown value to a Problem; unknown errors become 500 and are logged by the caller. */
export function toProblem(err) {
    if (isProblem(err))
        return { problem: err, unexpected: false };
    const fe = err;
    switch (fe.code) {
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
            return { problem: problems.payloadTooLarge('Request body is too large'), unexpected: false };
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
            return { problem: problems.unsupportedMediaType(fe.message), unexpected: false };
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
            return { problem: problems.malformedJson(fe.message), unexpected: false };
        case 'FST_ERR_BAD_URL':
            return { problem: problems.badRequest('The URL is not validly percent-encoded'), unexpected: false };
        case 'FST_ERR_MAX_PARAM_LENGTH':
            return { problem: problems.uriTooLong('A path parameter of the URL is too long'), unexpected: false };
        // The storage layer's own errors (src/log/errors.ts, matched by code: api does not import log/):
        // a partition this node cannot serve right now is a retriable 503, not an internal error.
        case 'LOG_PARTITION_UNAVAILABLE':
        case 'LOG_CORRUPT_BATCH':
        case 'LOG_CLOSED':
            return { problem: problems.unavailable(`${fe.message ?? 'The partition is unavailable on this node'}; retry, or read through another node`), unexpected: false };
    }
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (status >= 400 && status < 500) {
        // Client errors raised by fastify or Node's parser (malformed URL, header overflow ...).
        return { problem: new Problem('badRequest', status, fe.message ?? 'Bad request'), unexpected: false };
    }
    return { problem: problems.internal('An internal error occurred'), unexpected: true };
}
export function errorHandler(err, request, reply) {
    const { problem, unexpected } = toProblem(err);
    if (unexpected) {
        request.log.error({ err }, 'unexpected error');
        sendProblem(reply, problems.internal(`An internal error occurred (flow id ${request.id})`));
        return;
    }
    if (problem.status >= 500)
        request.log.warn({ problem: problem.toJSON() }, 'request failed');
    sendProblem(reply, problem);
}
/**
 * Requests that never became requests (Node's HTTP parser refused them: broken request line or
 * headers, headers too large, timeouts) get a Problem too, written straight to the socket as fastify's
 * default handler does, and the connection is closed: after a parse error the stream is unusable.
 */
export function clientErrorHandler(err, socket) {
    if (err.code === 'ECONNRESET' || socket.destroyed)
        return;
    const problem = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problems.requestTimeout('The request was not received in time')
        : err.code === 'HPE_HEADER_OVERFLOW'
            ? problems.headersTooLarge('The request headers are too large')
            : problems.badRequest('The request is not valid HTTP/1.1');
    const body = JSON.stringify(problem.toJSON());
    if (socket.writable) {
        socket.write(`HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: ${problemContentType}\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
}
export function problemBody(p) {
    return p.toJSON();
}
//# sourceMappingURL=problem-reply.js.map