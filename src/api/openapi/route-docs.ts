/**
 * The OpenAPI description of every route, keyed like auth/permissions.ts ("METHOD /pattern"), and
 * attached to the routes by @fastify/swagger's `transform` when the document is built.
 *
 * Why documentation-only, and kept beside the routes rather than in their `schema` option: Brook
 * validates every request itself (raw-Buffer bodies, its own rules and Problem details, see app.ts
 * and json-body.ts), and several answers are streamed or pre-serialized strings. A `schema` given to
 * fastify would be compiled into a validator (answering 400 in fastify's own format before Brook's
 * rules run) and into a response serializer (dropping fields the schema does not list). Giving the
 * schemas to the document generator only guarantees that documenting a route changes no status,
 * no error detail and no body. openapi.http.test.ts fails when a route has no entry here, and checks
 * real answers against these schemas.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import * as S from './schemas.js';

export interface RouteDoc {
  summary: string;
  description?: string;
  tags: string[];
  params?: TSchema;
  querystring?: TSchema;
  headers?: TSchema;
  body?: TSchema;
  /** Status -> response; `content` maps media types to schemas (none: an empty body). */
  response: Record<string, { description: string; type?: 'null'; content?: Record<string, { schema: TSchema }> }>;
}

/** An answer without a body (@fastify/swagger documents type null as no content). */
const empty = (description: string) => ({ description, type: 'null' as const });
const json = (schema: TSchema) => ({ 'application/json': { schema } });
const ok = (description: string, schema?: TSchema) => (schema === undefined ? { description } : { description, content: json(schema) });
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: S.Problem } } });
const stream = (schema: TSchema) => ({ 'application/x-json-stream': { schema } });

/** Error answers every authenticated route may give (authentication on; 503 while no metadata majority answers). */
const authErrors = { 401: problem('No valid bearer token'), 403: problem('Missing scope, not the administrator, or event type authorization') };
const common = { ...authErrors, 503: problem('Unavailable: no metadata majority, shutting down, or partitions not served by this node') };
const badJson = { 400: problem('Malformed JSON body') };
const unknownType = { 404: problem('No such event type') };
const unprocessable = (what: string) => ({ 422: problem(what) });

const nameParam = Type.Object({ name: Type.String({ description: 'Event type name' }) });
const idParam = Type.Object({ id: Type.String({ description: 'Subscription id (uuid)' }) });
const paging = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});
const streamQuery = {
  batch_limit: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Events per batch at most' })),
  batch_flush_timeout: Type.Optional(Type.Number({ default: 30, description: 'Seconds before a partial batch is sent' })),
  stream_limit: Type.Optional(Type.Integer({ default: 0, description: 'Events in the stream at most; 0 is unlimited' })),
  stream_timeout: Type.Optional(Type.Number({ default: 0, description: 'Lifetime in seconds; 0 is unlimited' })),
  stream_keep_alive_limit: Type.Optional(Type.Integer({ default: 0, description: 'Consecutive keep-alive batches before closing; 0 is unlimited' })),
};
const blacklistParams = Type.Object({
  type: Type.Unsafe<string>({ type: 'string', enum: ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'] }),
  name: Type.String({ description: 'Application or event type name' }),
});
const streamIdHeaders = Type.Object({ 'X-Svc-StreamId': Type.String({ description: 'The stream id received when the stream opened (alias X-Nakadi-StreamId)' }) });

const et = ['event types'];
const pub = ['publishing'];
const cons = ['consumption'];
const subs = ['subscriptions'];
const adm = ['administration'];
const node = ['node'];

export const routeDocs: Readonly<Record<string, RouteDoc>> = {
  'GET /health': { summary: 'Liveness: 200 "OK" while the node serves HTTP (no authentication)', tags: node, response: { 200: { description: 'OK', content: { 'text/plain': { schema: Type.String() } } } } },
  'GET /cluster': { summary: "This node's view of the cluster: members, reachability, metadata leader and term, partitions with their leaders and replicas", tags: node, response: { 200: ok('The view', S.ClusterView), ...authErrors } },
  'POST /cluster/partitions/:group/move': {
    summary: 'Move a replica of a partition to another node (administrator)',
    description: 'Records the first step of the move (the new node becomes a learner) and answers 202; the partition leader then brings the new replica up to date, promotes it once caught up, moves leadership away from the old node, removes it and drops its data. GET /cluster shows the progress. docs/replication.md, "Moving a replica".',
    tags: node,
    params: Type.Object({ group: Type.String({ description: 'The Raft group of the partition (GET /cluster, partitions[].group)' }) }),
    body: S.ReplicaMoveRequest,
    response: { 202: ok('The move is recorded', S.ReplicaMove), ...badJson, ...common, 404: problem('No partition is replicated by that group'), 409: problem('A move of this partition is in flight'), ...unprocessable('Unknown node, "from" not a replica, "to" already one, or a malformed body') },
  },
  'DELETE /cluster/partitions/:group/move': {
    summary: 'Cancel the replica move in flight (administrator)',
    description: 'Allowed until the new replica is promoted; the partition leader then removes the learner and its node drops its data.',
    tags: node,
    params: Type.Object({ group: Type.String() }),
    response: { 202: ok('The cancel is recorded', S.ReplicaMove), ...common, 404: problem('No partition is replicated by that group'), 409: problem('No move in flight, or its new replica is already promoted') },
  },
  'POST /cluster/partitions/:group/accept-loss': {
    summary: "Accept the loss of a partition whose only replica, or every replica, is damaged (administrator; loses data)",
    description:
      "For a partition with one replica, on this node, that its raft marker found damaged (a lost write-ahead-log tail): nobody can repair it, so it takes no writes. " +
      'Accepting makes what the replica holds the partition\'s log: it leads again at a term above every term its node may have used, and takes writes; events acknowledged after what it held are gone for good, and their offsets go to new events. ' +
      'For a partition of several replicas, every one damaged or too few healthy to elect a leader (two of three damaged; asked on any node): this node asks each replica\'s node (GET /cluster/partitions/{group}/replica, with these credentials), the replica with the newest log (or the one on the node `replica` names) keeps its log and becomes the only voter, and the others rejoin empty and are made voters again once they have copied it. ' +
      'Refused (409) when the healthy replicas can elect a leader (they repair the others), when a replica\'s node does not answer, when one still learns its term floor, when this node holds no replica of a sole-replica partition, or when `replica` names a node without one. Logged at error level and recorded in the metadata: GET /cluster lists it on every node (accepted_losses). docs/replication.md, "Accepting the loss of a sole replica" and "Accepting the loss of a partition whose every replica is damaged".',
    tags: node,
    params: Type.Object({ group: Type.String({ description: 'The Raft group of the partition (GET /cluster, partitions[].group)' }) }),
    querystring: Type.Object({ replica: Type.Optional(Type.String({ description: 'Several replicas, every one damaged: the node whose replica keeps its log (default: the one with the newest log)' })) }),
    response: {
      200: ok('The loss is accepted and recorded; a sole replica leads; with several, the kept one leads once its node applied the record', S.AcceptedLoss),
      ...common,
      400: problem('replica is not a node id'),
      404: problem('No partition is replicated by that group'),
      409: problem('The healthy replicas can elect a leader, a replica did not answer, this node holds none of a sole-replica partition, or the named node holds no replica'),
    },
  },
  'GET /cluster/partitions/:group/replica': {
    summary: "This node's replica of a partition: its damage, its log's last term and index, its term floor (administrator)",
    description: 'What the lever for a partition whose every replica is damaged compares (docs/replication.md, "Accepting the loss of a partition whose every replica is damaged"); ask each node that holds a replica.',
    tags: node,
    params: Type.Object({ group: Type.String({ description: 'The Raft group of the partition (GET /cluster, partitions[].group)' }) }),
    response: { 200: ok("This node's replica", S.ReplicaReport), ...common, 404: problem('No partition is replicated by that group'), 409: problem('This node holds no replica of it, or its replica is not open') },
  },
  'POST /cluster/accept-loss': {
    summary: "Accept the loss of every partition of this node whose only replica is damaged (administrator; loses data)",
    description: 'POST /cluster/partitions/{group}/accept-loss for each partition whose replica on this node is damaged and is its only one; damaged replicas with other replicas are listed as refused and left to their repair.',
    tags: node,
    response: { 200: ok('What was accepted and what was not', S.AcceptAllLosses), ...common },
  },
  'GET /openapi.json': { summary: 'This document', tags: node, response: { 200: ok(
        'OpenAPI 3 document (its parts are those of the OpenAPI 3.0 specification)',
        Type.Object(
          {
            openapi: Type.String(),
            info: Type.Object({ title: Type.String(), version: Type.String() }, { additionalProperties: true }),
            paths: Type.Object({}, { additionalProperties: true }),
            components: Type.Optional(Type.Object({}, { additionalProperties: true })),
            tags: Type.Optional(Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true }))),
            security: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
            servers: Type.Optional(Type.Array(Type.Object({ url: Type.String() }, { additionalProperties: true }))),
          },
          { additionalProperties: true },
        ),
      ) } },

  'GET /event-types': { summary: 'List event types', tags: et, response: { 200: ok('Every event type', Type.Array(S.EventType)), ...common } },
  'POST /event-types': {
    summary: 'Create an event type',
    tags: et,
    body: S.EventType,
    response: { 201: empty('Created (no body)'), ...badJson, ...common, 409: problem('The name exists (or is being deleted)'), ...unprocessable('Invalid schema, strategy or field') },
  },
  'GET /event-types/:name': { summary: 'Get an event type', tags: et, params: nameParam, response: { 200: ok('The event type', S.EventType), ...common, ...unknownType } },
  'PUT /event-types/:name': {
    summary: 'Update an event type (schema evolution by compatibility_mode)',
    tags: et,
    params: nameParam,
    body: S.EventType,
    response: { 200: empty('Updated (no body)'), ...badJson, ...common, ...unknownType, ...unprocessable('Change not allowed, or invalid') },
  },
  'DELETE /event-types/:name': {
    summary: 'Delete an event type',
    tags: et,
    params: nameParam,
    response: { 200: empty('Deleted (no body)'), ...common, ...unknownType, 409: problem('Subscriptions still use it') },
  },
  'GET /event-types/:name/schemas': {
    summary: 'Schema versions of an event type, newest first',
    tags: et,
    params: nameParam,
    querystring: paging,
    response: { 200: ok('A page of schemas', S.SchemaPage), 400: problem('Invalid limit or offset'), ...common, ...unknownType },
  },
  'GET /event-types/:name/schemas/:version': {
    summary: 'One schema version ("latest" is accepted)',
    tags: et,
    params: Type.Object({ name: Type.String(), version: Type.String({ description: 'Semantic version or "latest"' }) }),
    response: { 200: ok('The schema', S.EventTypeSchema), ...common, 404: problem('No such event type or version') },
  },

  'POST /event-types/:name/events': {
    summary: 'Publish a batch of events',
    description: 'Each event is validated, enriched and appended to one partition; a validation failure rejects the whole batch (422).',
    tags: pub,
    params: nameParam,
    body: Type.Array(Type.Object({}, empty('An event of the event type'))),
    response: {
      200: empty('Every event is durably stored (no body)'),
      207: ok('Some events were not stored', Type.Array(S.BatchItemResponse)),
      422: ok('Nothing was stored: one item per event saying what failed', Type.Array(S.BatchItemResponse)),
      ...badJson,
      ...common,
      ...unknownType,
      413: problem('Body too large'),
    },
  },
  'GET /event-types/:name/events': {
    summary: 'Low-level stream: one JSON batch per line',
    description: 'Without X-Svc-Cursors every partition streams from its newest event.',
    tags: cons,
    params: nameParam,
    querystring: Type.Object(streamQuery),
    headers: Type.Object({ 'X-Svc-Cursors': Type.Optional(Type.String({ description: 'JSON array of Cursor (alias X-Nakadi-Cursors); offsets are exclusive' })) }),
    response: {
      200: { description: 'The stream', content: stream(S.EventStreamBatch) },
      400: problem('X-Svc-Cursors is not a JSON array of cursors'),
      ...common,
      ...unknownType,
      ...unprocessable('Invalid cursor or stream parameters'),
      429: problem('Too many connections to one partition'),
    },
  },
  'GET /event-types/:name/partitions': {
    summary: 'Partitions with their oldest and newest offsets',
    tags: cons,
    params: nameParam,
    querystring: Type.Object({ cursors: Type.Optional(Type.String({ description: 'URL-encoded JSON array of Cursor: adds unconsumed_events' })) }),
    response: { 200: ok('Every partition', Type.Array(S.Partition)), 400: problem('cursors is not a JSON array'), ...common, ...unknownType, ...unprocessable('Invalid cursor') },
  },
  'GET /event-types/:name/partitions/:partition': {
    summary: 'One partition',
    tags: cons,
    params: Type.Object({ name: Type.String(), partition: Type.String() }),
    querystring: Type.Object({ consumed_offset: Type.Optional(Type.String({ description: 'Adds unconsumed_events' })) }),
    response: { 200: ok('The partition', S.Partition), ...common, 404: problem('No such event type or partition'), ...unprocessable('Invalid offset') },
  },
  'POST /event-types/:name/cursor-distances': {
    summary: 'Events between pairs of cursors',
    tags: cons,
    params: nameParam,
    body: Type.Array(S.CursorDistanceQuery),
    response: { 200: ok('One result per query', Type.Array(S.CursorDistanceResult)), ...badJson, ...common, ...unknownType, ...unprocessable('Invalid cursor') },
  },
  'POST /event-types/:name/cursors-lag': {
    summary: 'Unconsumed events after each cursor',
    tags: cons,
    params: nameParam,
    body: Type.Array(S.Cursor),
    response: { 200: ok('One partition per cursor', Type.Array(S.Partition)), ...badJson, ...common, ...unknownType, ...unprocessable('Invalid cursor') },
  },
  'POST /event-types/:name/shifted-cursors': {
    summary: 'Cursors moved by a number of events',
    tags: cons,
    params: nameParam,
    body: Type.Array(S.ShiftedCursor),
    response: { 200: ok('One cursor per shifted cursor', Type.Array(S.Cursor)), ...badJson, ...common, ...unknownType, ...unprocessable('Start or result out of range') },
  },
  'GET /registry/partition-strategies': { summary: 'Partition strategies', tags: et, response: { 200: ok('Names', S.StringList), ...authErrors } },
  'GET /registry/enrichment-strategies': { summary: 'Enrichment strategies', tags: et, response: { 200: ok('Names', S.StringList), ...authErrors } },

  'POST /subscriptions': {
    summary: 'Create a subscription (or get the one with the same key)',
    tags: subs,
    body: S.Subscription,
    response: { 200: ok('It existed already', S.Subscription), 201: ok('Created', S.Subscription), ...badJson, ...common, ...unprocessable('Invalid subscription') },
  },
  'GET /subscriptions': {
    summary: 'List subscriptions, newest first',
    tags: subs,
    querystring: Type.Object({
      event_type: Type.Optional(Type.Array(Type.String(), empty('Repeatable: keeps subscriptions having all given event types'))),
      owning_application: Type.Optional(Type.String()),
      ...paging.properties,
    }),
    response: { 200: ok('A page of subscriptions', S.SubscriptionPage), 400: problem('Invalid filter or paging'), ...common },
  },
  'GET /subscriptions/:id': { summary: 'Get a subscription', tags: subs, params: idParam, response: { 200: ok('The subscription', S.Subscription), ...common, 404: problem('No such subscription') } },
  'PUT /subscriptions/:id': {
    summary: "Change a subscription's authorization section (every other field must be as stored)",
    tags: subs,
    params: idParam,
    body: S.Subscription,
    response: { 204: empty('Updated'), ...badJson, ...common, 404: problem('No such subscription'), ...unprocessable('A field other than authorization changed, or the section was removed') },
  },
  'DELETE /subscriptions/:id': { summary: 'Delete a subscription', tags: subs, params: idParam, response: { 204: empty('Deleted'), ...common, 404: problem('No such subscription') } },
  'GET /subscriptions/:id/events': {
    summary: 'Subscription stream: one JSON batch per line; the stream id is in X-Svc-StreamId',
    tags: subs,
    params: idParam,
    querystring: Type.Object({ ...streamQuery, max_uncommitted_events: Type.Optional(Type.Integer({ minimum: 1, default: 10 })) }),
    response: {
      200: { description: 'The stream', content: stream(S.SubscriptionEventStreamBatch) },
      400: problem('Invalid parameters'),
      ...common,
      404: problem('No such subscription'),
      409: problem('No free slot, or a cursor reset is running'),
      ...unprocessable('Invalid stream parameters'),
    },
  },
  'POST /subscriptions/:id/cursors': {
    summary: 'Commit cursors of a stream',
    tags: subs,
    params: idParam,
    headers: streamIdHeaders,
    body: S.CommitBody,
    response: {
      204: empty('All committed'),
      200: ok('Some cursors were not ahead of the committed ones', S.CursorCommitResults),
      400: problem('Malformed body or missing X-Svc-StreamId'),
      ...common,
      404: problem('No such subscription'),
      ...unprocessable('Unknown stream, or a partition the stream does not own'),
    },
  },
  'GET /subscriptions/:id/cursors': { summary: 'Committed cursors', tags: subs, params: idParam, response: { 200: ok('The committed cursors', S.CommittedCursors), ...common, 404: problem('No such subscription') } },
  'PATCH /subscriptions/:id/cursors': {
    summary: 'Reset cursors (streams are closed, offsets move to the given ones)',
    tags: subs,
    params: idParam,
    body: S.ResetBody,
    response: { 204: empty('Reset'), ...badJson, ...common, 404: problem('No such subscription'), 409: problem('A reset is already running'), ...unprocessable('Invalid cursors') },
  },
  'GET /subscriptions/:id/stats': {
    summary: 'Per partition: state, owning stream and unconsumed events',
    tags: subs,
    params: idParam,
    response: { 200: ok('Statistics per event type', S.SubscriptionStats), ...common, 404: problem('No such subscription') },
  },

  'GET /settings/features': { summary: 'Feature toggles', tags: adm, response: { 200: ok('Every toggle', S.FeatureList), ...common } },
  'POST /settings/features': { summary: 'Set a feature toggle', tags: adm, body: S.Feature, response: { 204: empty('Set'), 400: problem('Unknown feature or malformed body'), ...common } },
  'GET /settings/blacklist': { summary: 'Blacklisted producers and consumers', tags: adm, response: { 200: ok('The blacklist', S.Blacklist), ...common } },
  'PUT /settings/blacklist/:type/:name': {
    summary: 'Blacklist an application or event type',
    tags: adm,
    params: blacklistParams,
    response: { 204: empty('Blacklisted'), 400: problem('Unknown type or invalid name'), ...common },
  },
  'DELETE /settings/blacklist/:type/:name': {
    summary: 'Remove from the blacklist',
    tags: adm,
    params: blacklistParams,
    response: { 204: empty('Removed'), 400: problem('Unknown type or invalid name'), ...common },
  },
  'GET /storages': { summary: 'Storages', tags: adm, response: { 200: ok('Every storage', Type.Array(S.Storage)), ...common } },
  'POST /storages': { summary: 'Create a storage', tags: adm, body: S.Storage, response: { 201: ok('Created', S.Storage), ...badJson, ...common, 409: problem('The id exists'), ...unprocessable('Invalid storage') } },
  'GET /storages/:id': { summary: 'One storage', tags: adm, params: Type.Object({ id: Type.String() }), response: { 200: ok('The storage', S.Storage), ...common, 404: problem('No such storage') } },
  'DELETE /storages/:id': {
    summary: 'Delete a storage',
    tags: adm,
    params: Type.Object({ id: Type.String() }),
    response: { 204: empty('Deleted'), 400: problem('In use'), ...common, 404: problem('No such storage') },
  },
  'GET /event-types/:name/timelines': { summary: 'Timelines of an event type', tags: adm, params: nameParam, response: { 200: ok('Every timeline', Type.Array(S.Timeline)), ...common, ...unknownType } },
  'POST /event-types/:name/timelines': {
    summary: 'Switch an event type to a new timeline on a storage',
    tags: adm,
    params: nameParam,
    body: Type.Object({ storage_id: Type.String() }),
    response: { 201: empty('Switched (no body)'), ...badJson, ...common, ...unknownType, ...unprocessable('No such storage, or the event type has timelinesMax timelines') },
  },
  'DELETE /event-types/:name/timelines/:id': {
    summary: 'Delete a timeline',
    tags: adm,
    params: Type.Object({ name: Type.String(), id: Type.String() }),
    response: { 200: empty('Deleted'), ...common, 404: problem('No such event type or timeline'), ...unprocessable('More than one timeline') },
  },
  'GET /metrics': { summary: 'Metrics as JSON (docs/metrics.md)', tags: adm, response: { 200: ok('The metrics', S.Metrics), ...authErrors } },
  'GET /metrics/prometheus': {
    summary: 'Metrics in the Prometheus text format',
    tags: adm,
    response: { 200: { description: 'Text exposition', content: { 'text/plain': { schema: Type.String() } } }, ...authErrors },
  },
};
