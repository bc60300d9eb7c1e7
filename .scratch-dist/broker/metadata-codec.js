import { commandProblem, isObject, metadataOps } from '../metadata/shapes.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
export function encodeCommand(cmd) {
    return Buffer.from(JSON.stringify(cmd));
}
/**
 * Decodes a command from a committed entry. Never throws: bytes that are not JSON become a value the
 * state machine refuses as malformed (shapes.ts), alike on every node, so a bad entry is not fatal.
 */
export function decodeCommand(data) {
    try {
        return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    }
    catch {
        return { op: '(not JSON)' };
    }
}
/** Checks an untrusted (forwarded) command's shape before it is proposed; returns why it is refused, or undefined. */
export function checkForwardedCommand(data) {
    let cmd;
    try {
        cmd = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    }
    catch {
        return 'command is not JSON';
    }
    if (!isObject(cmd))
        return 'command is not an object';
    if (!metadataOps.has(cmd['op']))
        return `unknown op ${JSON.stringify(cmd['op'])}`;
    return commandProblem(cmd);
}
export function encodeImage(sm) {
    const image = { v: 1, commands: sm.appliedIndex, state: sm.snapshot() };
    return Buffer.from(JSON.stringify(image));
}
function parseImage(data) {
    let image;
    try {
        image = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    }
    catch (err) {
        return { problem: `not JSON (${err.message})` };
    }
    if (!isObject(image))
        return { problem: 'not an object' };
    if (image['v'] !== 1)
        return { problem: `metadata snapshot format ${JSON.stringify(image['v'])} is not known` };
    if (!Number.isSafeInteger(image['commands']) || image['commands'] < 0)
        return { problem: 'commands is not a count' };
    return { image: image };
}
/** Why snapshot data is not a metadata image this version can restore, or undefined when it is one. */
export function imageProblem(data) {
    const r = parseImage(data);
    return 'problem' in r ? r.problem : MetadataStateMachine.snapshotProblem(r.image.state);
}
/** The state machine of a snapshot image; throws when the image is malformed (restore checks its state). */
export function decodeImage(data) {
    const r = parseImage(data);
    if ('problem' in r)
        throw new Error(`malformed metadata snapshot: ${r.problem}`);
    return MetadataStateMachine.restore(r.image.state, r.image.commands);
}
export function encodeResult(r) {
    return Buffer.from(JSON.stringify(r));
}
/** Decodes an apply result from the leader; undefined if it is not one. */
export function decodeResult(data) {
    try {
        const r = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
        if (!isObject(r) || typeof r['ok'] !== 'boolean')
            return undefined;
        if (r['ok'] === false && (typeof r['reason'] !== 'string' || typeof r['detail'] !== 'string'))
            return undefined;
        return r;
    }
    catch {
        return undefined;
    }
}
//# sourceMappingURL=metadata-codec.js.map