/**
 * Per-request log lines. At thousands of publishes per second an info line per request would be most
 * of the log volume and a measurable share of the CPU, so successful requests are logged at debug
 * (set the log level to debug for an access log); client errors at info, server errors at warn, with
 * the flow id, status and duration.
 */
import { LogController } from 'fastify';
export class BrookLogController extends LogController {
    constructor() {
        super({ requestIdLogLabel: 'flowId' });
    }
    incomingRequest(request) {
        request.log.debug({ req: request }, 'incoming request');
    }
    requestCompleted(error, request, reply) {
        const status = reply.statusCode;
        const fields = { method: request.method, url: request.url, status, responseTimeMs: Math.round(reply.elapsedTime * 100) / 100 };
        if (error)
            reply.log.error({ ...fields, err: error }, 'request errored');
        else if (status >= 500)
            reply.log.warn(fields, 'request completed');
        else if (status >= 400)
            reply.log.info(fields, 'request completed');
        else
            reply.log.debug(fields, 'request completed');
    }
}
//# sourceMappingURL=access-log.js.map