/**
 * Server-streaming calls (remote reads, log shipping) with backpressure end to end, and the mapping
 * of gRPC failures to TransportErrors.
 *
 * Server side: the handler's AsyncIterable is pulled only when the call can take more, so a slow
 * client holds the producer back instead of making the server buffer: at most
 * streamChunksInFlightMax written chunks are unconfirmed (a write is confirmed once HTTP/2 took it,
 * which flow control holds back until the client reads), and a write that returns false waits for
 * 'drain'. The client side reads one message at a time (grpc-js pauses the HTTP/2 stream while its
 * small object buffer is full), so what is in flight per call is bounded by that buffer, the HTTP/2
 * windows and the two unconfirmed chunks. Either side cancelling ends the other: a client's cancel
 * aborts the handler's signal and returns its iterator; a handler's failure or the end of the server
 * ends the client's iteration with a TransportError.
 */
import * as grpc from '@grpc/grpc-js';
import { DecodeError } from './codec.js';
import { streamChunksInFlightMax } from './limits.js';
import { TransportError } from './types.js';
/** The gRPC status a failure on the server side is reported with. */
export function statusOf(err) {
    if (err instanceof TransportError) {
        const code = err.kind === 'refused' ? grpc.status.INVALID_ARGUMENT : err.kind === 'cancelled' ? grpc.status.CANCELLED : grpc.status.UNAVAILABLE;
        return { code, details: err.message };
    }
    if (err instanceof DecodeError)
        return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
    return { code: grpc.status.INTERNAL, details: err?.message ?? String(err) };
}
/**
 * What a failed client call means to its caller. Only the caller's own abort is `cancelled`: a call
 * the server cancelled (it shut down) is `unavailable`, to be retried elsewhere, and so is a call the
 * peer refused to authenticate (the request itself may be fine).
 */
export function transportErrorOf(err, peer, signal) {
    if (signal?.aborted)
        return new TransportError('cancelled', `call to node ${peer} cancelled`);
    if (err instanceof TransportError)
        return err;
    const code = err?.code;
    const details = err?.details;
    const text = `node ${peer}: ${typeof details === 'string' && details !== '' ? details : err?.message ?? String(err)}`;
    switch (code) {
        case grpc.status.INVALID_ARGUMENT:
        case grpc.status.FAILED_PRECONDITION:
        case grpc.status.OUT_OF_RANGE:
            return new TransportError('refused', text);
        case grpc.status.UNAUTHENTICATED:
        case grpc.status.PERMISSION_DENIED:
            // The peer does not accept this node (credentials or membership): nothing wrong with the request.
            return new TransportError('unavailable', `node ${peer} refused this node: ${typeof details === 'string' ? details : ''}`);
        default:
            return new TransportError('unavailable', text);
    }
}
/**
 * Serves a server-streaming call from `open(signal)`: each chunk it yields is encoded into wire
 * messages (`encode` may split one into several) and written with backpressure. Ends the call with
 * OK when the source ends, with the failure's status when it throws; `signal` aborts when the call is
 * over for any reason, and the source's iterator is returned when the call is cancelled.
 */
export async function serveStream(call, open, encode, logger) {
    const abort = new AbortController();
    let inFlight = 0;
    let needDrain = false;
    let wake;
    const poke = () => {
        const w = wake;
        wake = undefined;
        w?.();
    };
    const onCancel = () => {
        abort.abort();
        poke();
    };
    const onDrain = () => {
        needDrain = false;
        poke();
    };
    call.on('cancelled', onCancel);
    call.on('drain', onDrain);
    const until = async (ready) => {
        while (!ready() && !abort.signal.aborted)
            await new Promise((r) => (wake = r));
    };
    let it;
    let finished = false;
    try {
        if (call.cancelled)
            return;
        it = open(abort.signal)[Symbol.asyncIterator]();
        for (;;) {
            const r = await it.next();
            if (r.done === true) {
                finished = true;
                break;
            }
            if (abort.signal.aborted)
                break;
            for (const w of encode(r.value)) {
                await until(() => !needDrain && inFlight < streamChunksInFlightMax);
                if (abort.signal.aborted)
                    break;
                inFlight++;
                const more = call.write(w, () => {
                    inFlight--;
                    poke();
                });
                if (!more)
                    needDrain = true;
            }
            if (abort.signal.aborted)
                break;
        }
        if (!abort.signal.aborted)
            call.end();
    }
    catch (err) {
        finished = true;
        if (!abort.signal.aborted) {
            const status = statusOf(err);
            if (status.code === grpc.status.INTERNAL)
                logger.error({ err }, 'a streaming handler failed');
            call.emit('error', status);
        }
    }
    finally {
        abort.abort();
        call.off('cancelled', onCancel);
        call.off('drain', onDrain);
        if (it !== undefined && !finished) {
            try {
                await it.return?.();
            }
            catch {
                // The call is over; a source failing to close has nothing left to tell anyone.
            }
        }
    }
}
/**
 * The client side of a server-streaming call, started on the first iteration (an iterable never
 * iterated opens no call): decodes and checks each message (`decode` throws a
 * DecodeError for a bad one, which ends the call), cancels the call when `signal` aborts or the
 * consumer stops early, and turns failures into TransportErrors.
 */
export async function* consumeStream(start, decode, peer, what, signal) {
    if (signal?.aborted)
        throw new TransportError('cancelled', `${what} from node ${peer} cancelled`);
    const call = start();
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
        for await (const w of call) {
            let value;
            try {
                value = decode(w);
            }
            catch (err) {
                if (!(err instanceof DecodeError))
                    throw err;
                throw new TransportError('unavailable', `malformed ${what} from node ${peer}: ${err.message}`);
            }
            yield value;
        }
    }
    catch (err) {
        throw transportErrorOf(err, peer, signal);
    }
    finally {
        signal?.removeEventListener('abort', onAbort);
        call.cancel();
    }
}
//# sourceMappingURL=streams.js.map