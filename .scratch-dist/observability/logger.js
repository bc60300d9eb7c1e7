/** The pino logger factory: JSON lines on stdout, the node id on every line, credentials redacted. */
import { pino } from 'pino';
export function createLogger(opts) {
    return pino({
        level: opts.level,
        base: { nodeId: opts.nodeId },
        redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
        timestamp: pino.stdTimeFunctions.isoTime,
    });
}
//# sourceMappingURL=logger.js.map