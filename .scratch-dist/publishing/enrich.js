/**
 * metadata_enrichment (compatibility.md): sets metadata.event_type (a different value is rejected),
 * received_at and version (read-only: a producer that sends them is rejected), and flow_id when
 * absent. The partition is written after partitioning (publish.ts). Enrichment never overwrites a
 * producer's value silently.
 */
export class EnrichmentError extends Error {
    name = 'EnrichmentError';
}
export function enrichMetadata(event, ctx) {
    const metadata = event['metadata'];
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
        throw new EnrichmentError('metadata must be an object');
    }
    const md = metadata;
    const et = md['event_type'];
    if (et !== undefined && et !== ctx.eventTypeName) {
        throw new EnrichmentError(`metadata.event_type "${String(et)}" does not match the event type "${ctx.eventTypeName}" of the endpoint`);
    }
    if (md['received_at'] !== undefined) {
        throw new EnrichmentError('metadata.received_at is set by the service and must not be sent');
    }
    if (md['version'] !== undefined) {
        throw new EnrichmentError('metadata.version is set by the service and must not be sent');
    }
    md['event_type'] = ctx.eventTypeName;
    md['received_at'] = ctx.receivedAt;
    md['version'] = ctx.schemaVersion;
    const addedFlowId = md['flow_id'] === undefined;
    if (addedFlowId)
        md['flow_id'] = ctx.flowId;
    return { addedEventType: et === undefined, addedFlowId };
}
//# sourceMappingURL=enrich.js.map