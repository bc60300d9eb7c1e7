export const metadataGroup = 0;
/** How a streaming call or `bounds` fails; a handler may throw one to choose the kind the caller sees. */
export class TransportError extends Error {
    name = 'TransportError';
    kind;
    constructor(kind, message) {
        super(message);
        this.kind = kind;
    }
}
//# sourceMappingURL=types.js.map