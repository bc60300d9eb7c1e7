/**
 * The interface's resources (interface.md, "Resources and their fields") as TypeBox schemas, for the
 * OpenAPI document only. They describe what Brook answers and accepts; they never validate or
 * serialize a request (route-docs.ts says why). Response objects are open (no additionalProperties:
 * false), so a field added later does not make an old document lie; required fields and types are
 * what a client may rely on, and openapi.http.test.ts checks real answers against them.
 *
 * OpenAPI 3.0 has no JSON Schema `null` type: nullable values use `nullable: true`.
 */
import { Type, type TSchema } from '@sinclair/typebox';

/** The named schemas, for components.schemas; routes and other schemas refer to them with $ref. */
export const componentSchemas: Record<string, TSchema> = {};

/** Registers a schema under a name and returns a reference to it. */
function named(id: string, schema: TSchema): TSchema {
  componentSchemas[id] = schema;
  return Type.Unsafe({ $ref: `#/components/schemas/${id}` });
}

const str = (description?: string) => Type.String(description === undefined ? {} : { description });
const strEnum = (values: readonly string[], description?: string) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], ...(description === undefined ? {} : { description }) });
const nullable = (type: 'string' | 'integer' | 'boolean', description: string) => Type.Unsafe<string | number | boolean | null>({ type, nullable: true, description });
/** An object whose keys are free (OpenAPI 3.0 has additionalProperties, not patternProperties). */
const map = (value: TSchema, description?: string) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: value, ...(description === undefined ? {} : { description }) });
const dateTime = (description: string) => Type.String({ format: 'date-time', description });

export const Problem = named('Problem', Type.Object(
  {
    type: Type.String({ description: 'http://httpstatus.es/<status>' }),
    title: Type.String({ description: 'The HTTP reason phrase' }),
    status: Type.Integer({ description: 'The HTTP status, repeated' }),
    detail: Type.Optional(Type.String({ description: 'What went wrong, naming the offending field or value' })),
    instance: Type.Optional(Type.String()),
  },
  { description: 'Every error (compatibility.md): Content-Type application/problem+json' },
));

export const EventTypeSchema = named('EventTypeSchema', Type.Object(
  {
    type: strEnum(['json_schema']),
    schema: str('The JSON Schema (draft 04), serialized as a string exactly as submitted'),
    version: Type.Optional(str('Semantic version, generated (1.0.0 on creation)')),
    created_at: Type.Optional(dateTime('Set by the service')),
  },
));

const AuthorizationAttribute = named('AuthorizationAttribute', Type.Object({ data_type: str(), value: str() }));

export const EventTypeAuthorization = named('EventTypeAuthorization', Type.Object(
  { admins: Type.Array(AuthorizationAttribute), readers: Type.Array(AuthorizationAttribute), writers: Type.Array(AuthorizationAttribute) },
  { description: 'The wildcard attribute is {"data_type":"*","value":"*"}' },
));

const EventTypeStatistics = named('EventTypeStatistics', Type.Object(
  { messages_per_minute: Type.Integer(), message_size: Type.Integer(), read_parallelism: Type.Integer(), write_parallelism: Type.Integer() },
  { description: 'Drives the number of partitions; cannot be changed later' },
));

export const EventType = named('EventType', Type.Object(
  {
    name: Type.String({ pattern: '^[a-zA-Z][-0-9a-zA-Z_]*(\\.[a-zA-Z][-0-9a-zA-Z_]*)*$' }),
    owning_application: str(),
    category: strEnum(['undefined', 'data', 'business']),
    schema: EventTypeSchema,
    partition_strategy: Type.Optional(strEnum(['random', 'hash', 'user_defined'], 'Default random')),
    partition_key_fields: Type.Optional(Type.Array(str())),
    enrichment_strategies: Type.Optional(Type.Array(strEnum(['metadata_enrichment']))),
    compatibility_mode: Type.Optional(strEnum(['compatible', 'forward', 'none'], 'Default forward')),
    default_statistic: Type.Optional(EventTypeStatistics),
    options: Type.Optional(Type.Object({ retention_time: Type.Optional(Type.Integer({ description: 'Milliseconds' })) })),
    authorization: Type.Optional(EventTypeAuthorization),
    read_scopes: Type.Optional(Type.Array(str())),
    write_scopes: Type.Optional(Type.Array(str())),
    created_at: Type.Optional(dateTime('Set by the service')),
    updated_at: Type.Optional(dateTime('Set by the service')),
  },
));

const PaginationLinks = named('PaginationLinks', Type.Object(
  { prev: Type.Optional(Type.Object({ href: str() })), next: Type.Optional(Type.Object({ href: str() })) },
  {  },
));

export const SchemaPage = Type.Object({ items: Type.Array(EventTypeSchema, { description: 'Newest first' }), _links: PaginationLinks });

export const BatchItemResponse = named('BatchItemResponse', Type.Object(
  {
    publishing_status: strEnum(['submitted', 'failed', 'aborted']),
    step: Type.Optional(strEnum(['none', 'validating', 'partitioning', 'enriching', 'publishing'])),
    eid: Type.Optional(str()),
    detail: Type.Optional(str()),
  },
));

export const Cursor = named('Cursor', Type.Object({ partition: str(), offset: str('Opaque; BEGIN means before the oldest available event') }));
export const ShiftedCursor = named('ShiftedCursor', Type.Object({ partition: str(), offset: str(), shift: Type.Integer() }));
export const CursorDistanceQuery = named('CursorDistanceQuery', Type.Object({ initial_cursor: Cursor, final_cursor: Cursor }));
export const CursorDistanceResult = named('CursorDistanceResult', Type.Object(
  { initial_cursor: Cursor, final_cursor: Cursor, distance: Type.Integer({ description: 'Excludes initial_cursor, includes final_cursor' }) },
  {  },
));

export const Partition = named('Partition', Type.Object(
  {
    partition: str(),
    oldest_available_offset: str(),
    newest_available_offset: str('BEGIN for an empty partition'),
    unconsumed_events: Type.Optional(Type.Integer({ description: 'Present when cursors or consumed_offset were given' })),
  },
));

const StreamInfo = Type.Object({ debug: Type.Optional(str()) }, { description: 'For debugging only; clients must not parse it' });
export const EventStreamBatch = named('EventStreamBatch', Type.Object(
  { cursor: Cursor, events: Type.Optional(Type.Array(Type.Object({}, { description: 'An event' }))), info: Type.Optional(StreamInfo) },
  { description: 'One line of the stream (application/x-json-stream), ended by a line feed' },
));

export const SubscriptionAuthorization = named('SubscriptionAuthorization', Type.Object(
  { admins: Type.Array(AuthorizationAttribute, { minItems: 1 }), readers: Type.Array(AuthorizationAttribute, { minItems: 1 }) },
  { description: 'admins may change (PUT) and delete the subscription and reset its cursors; readers may stream and commit; either may read it, its cursors and stats. Every operation also needs read access to each of its event types' },
));

const SubscriptionCursorWithoutToken = named('SubscriptionCursorWithoutToken', Type.Object({ event_type: str(), partition: str(), offset: str() }));
export const SubscriptionCursor = named('SubscriptionCursor', Type.Object(
  { event_type: str(), partition: str(), offset: str(), cursor_token: str() },
  {  },
));

export const Subscription = named('Subscription', Type.Object(
  {
    id: Type.Optional(str('Generated')),
    owning_application: Type.String({ minLength: 1 }),
    event_types: Type.Array(str()),
    consumer_group: Type.Optional(Type.String({ minLength: 1, description: 'Default "default"' })),
    read_from: Type.Optional(strEnum(['begin', 'end', 'cursors'], 'Default end')),
    initial_cursors: Type.Optional(Type.Array(SubscriptionCursorWithoutToken)),
    created_at: Type.Optional(dateTime('Generated')),
    authorization: Type.Optional(SubscriptionAuthorization),
  },
));

export const SubscriptionPage = Type.Object({ items: Type.Array(Subscription, { description: 'Newest first' }), _links: PaginationLinks });
export const SubscriptionEventStreamBatch = named('SubscriptionEventStreamBatch', Type.Object(
  { cursor: SubscriptionCursor, events: Type.Optional(Type.Array(Type.Object({}))), info: Type.Optional(StreamInfo) },
  {  },
));
export const CommitBody = Type.Object({ items: Type.Array(SubscriptionCursor) });
export const ResetBody = Type.Object({ items: Type.Array(SubscriptionCursorWithoutToken) });
export const CursorCommitResults = Type.Object({
  items: Type.Array(Type.Object({ cursor: SubscriptionCursor, result: strEnum(['committed', 'outdated']) })),
});
export const CommittedCursors = Type.Object({ items: Type.Array(SubscriptionCursor) });
export const SubscriptionStats = Type.Object({
  items: Type.Array(
    Type.Object({
      event_type: str(),
      partitions: Type.Array(
        Type.Object({
          partition: str(),
          state: strEnum(['unassigned', 'reassigning', 'assigned']),
          stream_id: Type.Optional(str('The stream that owns the partition')),
          unconsumed_events: Type.Optional(Type.Integer()),
        }),
      ),
    }),
  ),
});

export const Feature = named('Feature', Type.Object({ feature: str(), enabled: Type.Boolean() }));
export const FeatureList = Type.Object({ items: Type.Array(Feature) });

const NameLists = Type.Object({ apps: Type.Optional(Type.Array(str())), event_types: Type.Optional(Type.Array(str())) });
export const Blacklist = named('Blacklist', Type.Object({ consumers: Type.Optional(NameLists), producers: Type.Optional(NameLists) }));

export const Storage = named('Storage', Type.Object(
  {
    id: Type.String({ maxLength: 36 }),
    storage_type: strEnum(['broker']),
    broker_configuration: map(Type.String(), 'ensemble_address, ensemble_port, coord_address, coord_path'),
  },
));

export const Timeline = named('Timeline', Type.Object(
  {
    id: Type.Optional(str()),
    event_type: Type.Optional(str()),
    order: Type.Optional(Type.Integer()),
    storage_id: Type.Optional(str()),
    topic: Type.Optional(str()),
    created_at: Type.Optional(dateTime('')),
    switched_at: Type.Optional(dateTime('')),
    cleaned_up_at: Type.Optional(dateTime('')),
    latest_position: Type.Optional(Type.Object({ offsets: Type.Optional(Type.Array(Cursor)) })),
  },
));

const ClusterMember = Type.Object({
  id: Type.Integer(),
  self: Type.Boolean(),
  suffrage: strEnum(['voter', 'learner', 'none']),
  raft_address: nullable('string', 'host:port of the Raft (gRPC) endpoint'),
  http_address: nullable('string', 'host:port of the HTTP API'),
  reachable: Type.Boolean(),
});
const ReplicaStatus = Type.Object({
  node: Type.Integer({ description: 'The node the replica runs on' }),
  member: Type.Integer({ description: 'Its Raft member id, as the placement lists it: the node id, or, for a data directory that replaced a wiped one, incarnation * 2^31 + node id' }),
  incarnation: Type.Integer({ description: '0 for the node id itself; another for a data directory that replaced a wiped one' }),
  role: strEnum(['voter', 'learner'], 'From placement; learners do not count for under-replication'),
  commit_index: nullable('integer', 'What the replica reported (its match index, as the leader knows it); null when it reported nothing to this node'),
  applied_index: nullable('integer', 'Null when it reported nothing to this node'),
  lag: nullable('integer', 'Entries behind the group commit index; null when it reported nothing'),
  in_sync: Type.Boolean({ description: 'Also true when this node does not lead the group and so cannot know' }),
  incomplete: nullable('boolean', 'Still fetching the retained log before its snapshot (it holds the Raft log; it does not lead while a complete replica can); null when it reported nothing to this node'),
});

const PartitionStatus = named('PartitionStatus', Type.Object(
  {
    event_type: str(),
    partition: str(),
    topic: Type.Integer({ description: 'The log (timeline) the partition belongs to' }),
    group: Type.Integer({ description: 'The Raft group that replicates the partition' }),
    leader: nullable('integer', 'The partition leader as this node observes it (its member id: see replicas); null when none is known'),
    leader_node: nullable('integer', 'The node of the leader; null when none is known'),
    term: nullable('integer', 'The group term; null when this node knows nothing of the group'),
    preferred_leader: Type.Integer({ description: 'Member id (see replicas)' }),
    preferred_leader_node: Type.Integer({ description: 'The node of the preferred leader' }),
    replicas: Type.Array(Type.Integer(), { description: 'Voters, as Raft member ids: node ids, or, for a data directory that replaced a wiped one, incarnation * 2^31 + node id (replica_status names node and incarnation); the first is the preferred leader' }),
    replica_nodes: Type.Array(Type.Integer(), { description: 'The node of each voter, in the order of replicas' }),
    learners: Type.Array(Type.Integer(), { description: 'Member ids (see replicas)' }),
    learner_nodes: Type.Array(Type.Integer(), { description: 'The node of each learner, in the order of learners' }),
    moving: Type.Union([Type.Object({ from: Type.Integer(), to: Type.Integer(), from_node: Type.Integer(), to_node: Type.Integer() }), Type.Null()], { description: 'The replica move in flight (POST /cluster/partitions/{group}/move): member ids and their nodes; or null' }),
    commit_index: nullable('integer', 'The group commit index, null when no replica reported'),
    applied_index: nullable('integer', 'The lowest applied index among the voters that reported'),
    lag: nullable('integer', 'How far the slowest voter trails the commit index'),
    under_replicated: Type.Boolean({ description: 'A voter reported nothing (down, or its node unreachable from the leader) or trails the commit index by more than the in-sync limit' }),
    incomplete_replicas: Type.Array(Type.Integer(), { description: 'Replicas (member ids) known here to be incomplete: still fetching the retained log before their snapshot (not under-replicated by that alone)' }),
    replica_status: Type.Array(ReplicaStatus),
  },
  { description: "One partition, as this node knows it: the leader of a group knows every replica's progress, another node only its own" },
));

export const ReplicaReport = named('ReplicaReport', Type.Object(
  {
    group: Type.Integer({ description: 'The Raft group that replicates the partition' }),
    event_type: str(),
    partition: str(),
    node: Type.Integer({ description: 'This node' }),
    member: Type.Integer({ description: "This node's member in the group" }),
    damage: nullable('string', 'What its damage mark says; null when it is not damaged'),
    probing: Type.Boolean({ description: 'Still learning its term floor from the other replicas' }),
    term: Type.Integer({ description: 'Its current term' }),
    last_term: Type.Integer({ description: "The term of its log's last entry" }),
    last_index: Type.Integer({ description: "Its log's last index" }),
    term_floor: Type.Integer({ description: "The highest of its term, its damage term and its node's term ceiling" }),
    damage_index: Type.Optional(Type.Integer({ description: 'Its damage mark\'s index (absent: not damaged)' })),
    damage_term: Type.Optional(Type.Integer({ description: 'Its damage mark\'s term (absent: not damaged)' })),
    newest_offset: Type.Optional(str('Its newest offset (BEGIN when it holds none)')),
  },
  { description: "This node's replica of a partition, as the lever for a partition whose every replica is damaged compares them (docs/replication.md)" },
));

export const AcceptedLoss = named('AcceptedLoss', Type.Object(
  {
    id: str('Drawn by the node that accepted it'),
    scope: Type.Union([Type.Literal('partition'), Type.Literal('metadata')], { description: "partition: a partition's only replica, or one of several all damaged (POST /cluster/partitions/{group}/accept-loss); metadata: a single node's metadata group (BROOK_ACCEPT_METADATA_LOSS)" }),
    node: Type.Integer({ description: 'The node whose replica was kept' }),
    event_type: Type.Optional(str('The partition\'s event type (absent for the metadata group)')),
    partition: Type.Optional(str('The partition (absent for the metadata group)')),
    group: Type.Integer({ description: 'The Raft group that replicates the partition (0: the metadata group)' }),
    at: str('When the loss was accepted (ISO 8601)'),
    kept: Type.Object(
      {
        newest_offset: Type.Optional(str('The newest offset the replica held, and kept (BEGIN when it held none); new events follow it. Absent for the metadata group')),
        last_index: Type.Integer({ description: 'The last Raft index it held' }),
      },
      { description: 'What the replica holds and keeps' },
    ),
    damage: Type.Object(
      {
        index: Type.Integer({ description: 'The Raft index up to which it may have acknowledged entries (as its damage mark says; 0 when unknown)' }),
        term: Type.Integer({ description: 'The highest term it may have used before the damage' }),
        reason: str('What was found'),
      },
      { description: "The replica's damage mark, as it was" },
    ),
    term_before: Type.Integer({ description: 'The term the replica was stuck at' }),
    term: Type.Integer({ description: 'The term it leads at now: above every term its node may have used; 0 when it did not lead within 5 s of the request (always 0 for a partition of several replicas: the kept replica\'s node acts when it applies the record)' }),
    rejoin: Type.Optional(Type.Array(Type.Integer(), { description: 'Several replicas, every one damaged: the nodes whose replicas rejoin empty and are made voters again' })),
    floor: Type.Optional(Type.Integer({ description: 'Several replicas: the term floor the kept replica leads above (the highest term any replica may have used)' })),
    replicas: Type.Optional(Type.Array(ReplicaReport, { description: 'Several replicas: what each replica\'s node reported when asked' })),
    recorded: Type.Optional(Type.Boolean({ description: 'In GET /cluster: whether the metadata holds the record (false: accepted on this node, its record not committed yet; it is proposed until it is)' })),
  },
  { description: 'A loss accepted by an operator: the events the partition acknowledged after what the replica kept are gone, and their offsets go to new events' },
));

export const AcceptAllLosses = named('AcceptAllLosses', Type.Object(
  {
    accepted: Type.Array(AcceptedLoss),
    refused: Type.Array(
      Type.Object({ group: Type.Integer(), event_type: str(), partition: str(), detail: str('Why not (another replica can repair it, ...)') }),
      { description: 'Damaged replicas of this node that were left as they are' },
    ),
  },
  { description: "The partitions of this node whose only replica was damaged, each now leading with what it held; and this node's other damaged replicas" },
));

export const ClusterView = named('ClusterView', Type.Object(
  {
    id: Type.Integer({ description: 'This node' }),
    incarnation: str('A fresh id per process start'),
    role: str('leader, follower, candidate or preCandidate in the metadata group'),
    members: Type.Array(ClusterMember),
    metadata: Type.Object({
      leader: nullable('integer', 'Node id of the metadata leader, null when none is known'),
      member: Type.Integer({ description: "This node's member id in the metadata group: its node id, or, for a data directory that joined after a wipe, incarnation * 2^31 + node id" }),
      members: Type.Array(
        Type.Object({
          id: Type.Integer({ description: 'Member id' }),
          node: Type.Integer({ description: 'The node it runs on' }),
          incarnation: Type.Integer({ description: '0 for the node id itself; another for a data directory that replaced a wiped one' }),
          suffrage: Type.Union([Type.Literal('voter'), Type.Literal('learner')]),
        }),
        { description: 'The metadata group configuration as applied on this node' },
      ),
      term: Type.Integer(),
      commit_index: Type.Integer(),
      applied_index: Type.Integer(),
      last_index: Type.Integer(),
      snapshot_index: Type.Integer(),
      raft_damaged: Type.Boolean({ description: "This member's Raft state was found damaged: it neither votes nor leads until repaired" }),
      raft_damage: nullable('string', 'What was found, while damaged'),
    }),
    partitions: Type.Array(PartitionStatus, { description: 'Every partition of every event type (and timeline)' }),
    under_replicated_partitions: Type.Integer(),
    leaderless_partitions: Type.Integer(),
    incomplete_partitions: Type.Integer({ description: 'Partitions with an incomplete replica' }),
    cluster_id: str('The cluster this data directory founded or joined'),
    disk_id: str('This data directory'),
    accepted_losses: Type.Array(AcceptedLoss, {
      description:
        'Losses operators accepted (POST /cluster/partitions/{group}/accept-loss, BROOK_ACCEPT_METADATA_LOSS) on any node, as recorded in the metadata, oldest first: the newest 100 are kept. Then those accepted on this node whose record is not committed yet (recorded false)',
    }),
    accepted_losses_older: Type.Integer({ description: 'How many older recorded losses were let go to bound the metadata' }),
  },
  { description: "This node's view of the cluster" },
));

export const ReplicaMove = named('ReplicaMove', Type.Object(
  {
    event_type: str(),
    partition: str(),
    topic: Type.Integer({ description: 'The log (timeline) the partition belongs to' }),
    group: Type.Integer({ description: 'The Raft group that replicates the partition' }),
    placement: Type.Object({
      replicas: Type.Array(Type.Integer(), { description: 'Voting replicas; the first is the preferred leader' }),
      learners: Type.Array(Type.Integer(), { description: 'Replicas being added, not voting yet' }),
      moving: Type.Union([Type.Object({ from: Type.Integer(), to: Type.Integer() }), Type.Null()], { description: 'The move in flight, or null' }),
    }),
  },
  { description: 'A partition and its placement as recorded by the request; the move goes on in the background (GET /cluster shows it)' },
));
export const ReplicaMoveRequest = named('ReplicaMoveRequest', Type.Object({ from: Type.Integer({ minimum: 1, description: 'The node whose replica moves' }), to: Type.Integer({ minimum: 1, description: 'The node that takes it' }) }));

export const Metrics = named('Metrics', Type.Object(
  {
    version: str(),
    gauges: map(Type.Object({ value: Type.Number() })),
    counters: map(Type.Object({ count: Type.Number() })),
    histograms: map(map(Type.Number())),
    meters: map(Type.Object({ count: Type.Number(), mean_rate: Type.Number(), units: str() })),
    timers: map(map(Type.Union([Type.Number(), Type.String()]))),
  },
  { description: 'docs/metrics.md names every figure' },
));

export const StringList = Type.Array(Type.String());

