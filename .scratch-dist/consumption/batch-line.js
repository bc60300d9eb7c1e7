/**
 * Encodes one stream batch as an NDJSON line without re-serializing events: stored events are already
 * JSON text, so a line is the cursor, the events' bytes joined by commas, and a newline.
 * Shape (compatibility.md): {"cursor":{...},"events":[...],"info":{...}}\n, keep-alives omit events.
 */
const eventsOpen = Buffer.from(',"events":[');
const comma = Buffer.from(',');
const closeEvents = Buffer.from(']');
const closeLine = Buffer.from('}\n');
export function encodeBatchLine(cursorJson, events, infoJson) {
    const head = Buffer.from('{"cursor":' + cursorJson);
    const parts = [head];
    if (events.length > 0) {
        parts.push(eventsOpen);
        for (let i = 0; i < events.length; i++) {
            if (i > 0)
                parts.push(comma);
            parts.push(events[i].bytes);
        }
        parts.push(closeEvents);
    }
    if (infoJson !== undefined)
        parts.push(Buffer.from(',"info":' + infoJson));
    parts.push(closeLine);
    return Buffer.concat(parts);
}
export function lowLevelCursorJson(partition, offset) {
    return `{"partition":${JSON.stringify(partition)},"offset":${JSON.stringify(offset)}}`;
}
//# sourceMappingURL=batch-line.js.map