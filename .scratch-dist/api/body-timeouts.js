import { clientErrorHandler } from './problem-reply.js';
export function installBodyIdleTimeout(app, bodyIdleTimeoutMs) {
    app.addHook('preParsing', async (request, reply, payload) => {
        const req = request.raw;
        const socket = req.socket;
        if (req.complete || socket === undefined || socket.destroyed)
            return payload;
        const idle = () => {
            request.log.info({ bodyIdleTimeoutMs }, 'request body idle too long; closing the connection');
            if (reply.raw.headersSent)
                socket.destroy();
            else
                clientErrorHandler(Object.assign(new Error('request body idle'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
        };
        const disarm = () => {
            req.off('timeout', idle);
            if (!socket.destroyed)
                socket.setTimeout(0);
        };
        // Node emits 'timeout' on an incomplete request when its socket times out; with a listener there,
        // Node leaves the socket to it.
        req.on('timeout', idle);
        req.once('end', disarm);
        req.once('close', disarm);
        socket.setTimeout(bodyIdleTimeoutMs);
        return payload;
    });
}
//# sourceMappingURL=body-timeouts.js.map