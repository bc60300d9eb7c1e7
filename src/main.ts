/**
 * The composition root: loads the configuration, opens the storage, restores metadata, wires the
 * services into the HTTP app, and starts and stops everything in order. The only file that knows
 * every part; everything else receives what it needs.
 *
 * Shutdown order (SIGTERM/SIGINT): stop accepting requests, end open streams, let in-flight publishes
 * finish (their appends are durable when acknowledged), stop retention, close the partition store
 * (flushes its queue) and then RocksDB.
 */
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { advertisedHost, loadConfig, loggableConfig, parsePeers, readClusterSecurity, ConfigError, type Config } from './config/config.js';
import { otherBodyBytesMax } from './core/limits.js';
import { currentMembers, nodeOfMember } from './core/member-id.js';
import { createLogger } from './observability/logger.js';
import { FileCell, openRocksKv, PartitionStore } from './log/index.js';
import { RaftMetadataGroup, type MemberAddresses } from './broker/metadata-group.js';
import { metadataReadLeases } from './broker/metadata-leases.js';
import { diskTokenOf, isFoundingDisk, markerFileName, NodeDisk, systemMarkerPacing } from './broker/node-disk.js';
import { registerDisk } from './broker/disk-registration.js';
import { mayFoundGroup } from './metadata/disk-registry.js';
import { checkMessageTo, checkSuperseded, supersededExitCode } from './broker/superseded-directory.js';
import { isFormerMember } from './metadata/partition-member-replacement.js';
import { foundOrJoin } from './broker/founding.js';
import { GroupDispatcher, GrpcTransport, metadataGroup } from './transport/index.js';
import { systemClock, systemRandom } from './broker/system.js';
import { startRetention } from './broker/retention.js';
import { StorageRouter } from './broker/storage-router.js';
import { RaftNodeHost, systemTicks } from './broker/raft-host/node-host.js';
import { SessionReaper } from './broker/session-reaper.js';
import { commitTimeoutSecondsMax } from './core/limits.js';
import { PartitionReplicas, type AppendForwarder, type PlacementLookup } from './broker/partition-replicas.js';
import { openStorageReplicas, storagesDir } from './broker/storage-replicas.js';
import { orphanedByNewMember } from './broker/partition-state-held.js';
import { ReplicaMover } from './broker/replica-mover.js';
import { MetadataMemberReplacer } from './broker/metadata-members.js';
import { PartitionMemberReplacer } from './broker/partition-members.js';
import { MoveService } from './broker/move-service.js';
import { LossService, type MetadataLossFacts, type ReplicaReportAnswer } from './broker/loss-service.js';
import { recordLoss } from './broker/loss-records.js';
import type { Offset } from './core/offset.js';
import { placedPartitions } from './metadata/placement-of.js';
import { AppliedPlacements } from './broker/placement-lookup.js';
import { clusterPartitions } from './metadata/cluster-partitions.js';
import { TimelineService } from './broker/timeline-service.js';
import { TimelineSwitcher } from './broker/timeline-switch.js';
import type { MembersSource } from './metadata/placement.js';
import { StorePartitionWriter } from './broker/partition-writer.js';
import { EventTypeService } from './registry/event-type-service.js';
import { FeatureService } from './settings/feature-service.js';
import { BlacklistService } from './settings/blacklist-service.js';
import { SubscriptionService } from './subscriptions/subscription-service.js';
import { SchemaValidatorCache } from './registry/index.js';
import { Publisher } from './publishing/publish.js';
import { CursorResolver } from './consumption/cursors.js';
import { ConnectionLimiter } from './consumption/connection-limiter.js';
import { SubscriptionHub } from './consumption/subscription-hub.js';
import { buildApp } from './api/app.js';
import { createAuthenticator } from './auth/create.js';
import { ResourceAccess } from './auth/resource-access.js';
import { OpenStreams } from './consumption/open-streams.js';
import { BrokerMetrics, subscriptionLag } from './observability/metrics.js';
import { directoryBytes, brookVersion } from './broker/system.js';
import type { EventTypeRecord } from './metadata/types.js';
import { TopicIndex } from './broker/topic-index.js';
import { NodeReplicaSet } from './broker/node-replica-set.js';
import { metadataReactions } from './broker/metadata-reactions.js';
import { metadataLimitKeys, type MetadataLimits } from './metadata/limits.js';

export interface RunningBroker {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startBroker(config: Config, logger: Logger = createLogger({ level: config.logLevel, nodeId: String(config.nodeId) })): Promise<RunningBroker> {
  const clock = systemClock;
  // A fresh incarnation per process start: peers and logs tell a restarted node from its former self.
  const incarnation = randomUUID();
  logger.info({ config: loggableConfig(config), incarnation }, 'starting brook');

  // First, before anything is opened: a bad authentication setup stops the start with nothing to undo.
  const authenticator = createAuthenticator(config, clock);
  const clusterSecurity = readClusterSecurity(config);
  // Metrics exist once the services do; what happens before (the first WAL syncs, the first election) is
  // counted from then on through these.
  let fsyncObserver: ((durationMs: number) => void) | undefined;
  let phaseObserver: ((phase: string, durationMs: number) => void) | undefined;
  let leaderChanges = 0;
  const kv = await openRocksKv(config.dataDir, { onSync: (durationMs) => fsyncObserver?.(durationMs) });
  // The directory's identity, and whether RocksDB lost raft writes since the last run (node-disk.ts).
  const disk = await NodeDisk.open({ kv, cell: new FileCell(join(config.dataDir, markerFileName)), self: config.nodeId, newId: randomUUID, logger: logger.child({ component: 'disk' }), pacing: systemMarkerPacing() });
  // The partition store of the version before partition replication: data written by it stays
  // readable below each partition group's first offset (partition-replicas.ts, `legacy`).
  const store = await PartitionStore.open(kv, {
    clock,
    logger: logger.child({ component: 'log' }),
    tailCacheBytesMax: config.tailCacheBytesMax,
  });
  // A directory superseded by a later one of this node (a backup restored, directories swapped) stops
  // at once, inside the apply or the receive that showed it, so nothing more is sent
  // (superseded-directory.ts).
  let metadataOpened = false;
  const supersededGuard = {
    node: config.nodeId,
    diskId: () => disk.identity.diskId,
    member: () => disk.metadataMember,
    // Until the metadata group has opened, a directory that neither founded the cluster nor made its
    // member id yet runs the node id only for now (it makes a new id as the group opens).
    memberDecided: () => metadataOpened || isFoundingDisk(disk.identity) || disk.identity.metadataMember !== undefined,
    stop: (message: string, reason: string) => {
      logger.fatal({ reason, dataDir: config.dataDir, diskId: disk.identity.diskId, exitCode: supersededExitCode }, message);
      process.exit(supersededExitCode);
    },
  };
  // Every partition is a Raft group on the node's Raft host (one Ready loop, one write, one fsync per
  // turn for all of them); a single node runs one-member groups.
  let fatalRef: ((err: unknown) => void) | undefined;
  const raftHost = new RaftNodeHost({
    self: config.nodeId,
    kv,
    disk,
    tickMs: config.raftTickMs,
    clock,
    ticks: systemTicks,
    logger: logger.child({ component: 'raft' }),
    onPhase: (phase, durationMs) => phaseObserver?.(phase, durationMs),
    // A quiesced follower wakes when its leader's node has been silent (no message, no ping) this long.
    livenessMs: config.raftElectionTicks * config.raftTickMs,
    onFatal: (err) => fatalRef?.(err),
    onOtherMember: (_group, to) => void checkMessageTo(supersededGuard, to, metadataRef?.state.disk(config.nodeId)),
  });
  let metadataForPlacement: RaftMetadataGroup | undefined;
  // Every Raft group hosted here registers with the dispatcher (the metadata group is group 0); a
  // single node has no transport and no dispatcher.
  const groups = parsePeers(config.peers).some((p) => p.id !== config.nodeId) ? new GroupDispatcher({ logger: logger.child({ component: 'transport' }), heard: (peer, incarnation) => raftHost.heard(peer, incarnation) }) : undefined;
  // Partitions created before placement existed live on the lowest founding node (metadata/placement-of.ts).
  const legacyReplica = Math.min(config.nodeId, ...parsePeers(config.peers).map((p) => p.id));
  // Told when event types or timelines come and go (onApplied, onRestored below).
  const placements = new AppliedPlacements(() => metadataForPlacement?.state, legacyReplica);
  const placement: PlacementLookup = (topic, partition) => placements.lookup(topic, partition);
  // A member a placement lists whose node's directory was wiped since (and runs another member).
  const formerMember = (m: number): boolean => isFormerMember(m, metadataForPlacement?.state.disk(nodeOfMember(m)));
  const replicas = new PartitionReplicas({
    self: config.nodeId,
    kv,
    disk,
    host: raftHost,
    placement,
    clock,
    random: systemRandom,
    logger: logger.child({ component: 'partitions' }),
    electionTicks: config.raftElectionTicks,
    heartbeatTicks: config.raftHeartbeatTicks,
    appendTimeoutMs: config.metadataTimeoutMs,
    legacy: store,
    memoryEntries: config.partitionMemoryEntries,
    // The memory tails of all partitions together, within the budget the tail cache had before.
    memoryBytesTotal: config.tailCacheBytesMax,
    ...(groups === undefined ? {} : { groups }),
    // A directory that did not found the cluster founds only the groups created after it registered.
    mayFound: (group) => mayFoundGroup(group, { token: diskTokenOf(disk.identity), foundingDisk: isFoundingDisk(disk.identity) }, metadataForPlacement?.state.disk(config.nodeId)),
    // The directory's member id, the same in partition groups as in the metadata group: a wiped
    // directory is a new member (docs/partition-replication.md).
    member: () => disk.metadataMember,
    formerMember,
  });
  const validators = new SchemaValidatorCache();
  // The metadata Raft group. Without peers it is a group of one and no transport is started.
  const self = config.nodeId;
  const peers = parsePeers(config.peers);
  const others = peers.filter((p) => p.id !== self);
  const directory: MemberAddresses[] = [
    { id: self, raftAddress: others.length > 0 ? `${advertisedHost(config)}:${config.raftPort}` : undefined, httpAddress: `${advertisedHost(config)}:${config.port}` },
    ...others.map((p) => ({ id: p.id, raftAddress: `${p.host}:${p.raftPort}`, httpAddress: p.httpPort === undefined ? undefined : `${p.host}:${p.httpPort}` })),
  ].map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as unknown as MemberAddresses);
  // Partition logs over timelines and storages; publishing and consumption address them by the event
  // type's first topic. The index from that topic to the event type is rebuilt after event types change.
  let metadataRef: RaftMetadataGroup | undefined;
  const topics = new TopicIndex(() => metadataRef?.state);
  const router = new StorageRouter(
    replicas,
    (topic) => topics.lookup(topic),
    // An operator-created storage: partition groups like the default storage's, in its own directory
    // with its own node host (storage-replicas.ts), on the node's transport.
    async (id) => {
      const t = transport;
      const opened = await openStorageReplicas({
        id,
        dataDir: config.dataDir,
        self,
        placement,
        clock,
        random: systemRandom,
        logger,
        tickMs: config.raftTickMs,
        electionTicks: config.raftElectionTicks,
        heartbeatTicks: config.raftHeartbeatTicks,
        appendTimeoutMs: config.metadataTimeoutMs,
        memoryEntries: config.partitionMemoryEntries,
        tailCacheBytesMax: config.tailCacheBytesMax,
        ...(groups === undefined ? {} : { groups }),
        ...(t === undefined ? {} : { transport: { send: (msgs) => t.send(msgs), forwarder: forwarderOf(t) } }),
        member: () => disk.metadataMember,
        formerMember,
        onFatal: (err) => fatalRef?.(err),
      });
      replicaSet.add(id, opened.replicas);
      return { store: opened.replicas, close: async () => { replicaSet.remove(id); await opened.close(); } };
    },
    // A batch turned away by a log sealed for a timeline switch waits for the switch's commit, as long
    // as an append may wait; past 2 s (or half that wait) the switch is finished from here (its node
    // may be gone).
    { switchWaitMs: config.metadataTimeoutMs, stuckAfterMs: Math.min(2000, config.metadataTimeoutMs / 2), onSwitchStuck: (topic, timeline) => switcherRef?.finishStuck(topic, timeline), monotonicMs: () => clock.monotonicMs() },
  );
  let switcherRef: TimelineSwitcher | undefined;
  /** This node's replicas on every open storage. */
  const replicaSet = new NodeReplicaSet(replicas, {
    state: () => metadataRef?.state,
    ensureStorage: (id) => router.ensureStorage(id),
    dropLogs: (logs) => router.dropLogs(logs),
    legacyReplica,
    logger,
  });
  let fatal: ((err: unknown) => void) | undefined;
  // Carries out replica moves (replica-mover.ts); created once the metadata group exists.
  let mover: ReplicaMover | undefined;
  // Replaces metadata members whose directory was wiped by their new members (metadata-members.ts).
  let replacer: MetadataMemberReplacer | undefined;
  // Replaces partition members whose directory was wiped (partition-members.ts).
  let partitionReplacer: PartitionMemberReplacer | undefined;
  // Created once the metadata group exists; applied commands wake its streams.
  let hub: SubscriptionHub | undefined;
  // Streams of this node, ended when the readers of their event type change or they are blacklisted.
  const openStreams = new OpenStreams();
  // The transport starts before the metadata group exists: a node whose directory belongs to no
  // cluster yet asks its peers (Identify) before it founds one, and they must be able to answer while
  // they wait for each other. Raft traffic for groups not registered yet is dropped (Raft takes it as
  // lost).
  let transport: GrpcTransport | undefined;
  if (others.length > 0) {
    transport = await GrpcTransport.start({
      self,
      incarnation,
      listen: `${config.host}:${config.raftPort}`,
      peers: others.map((p) => ({ id: p.id, raftAddress: `${p.host}:${p.raftPort}` })),
      handler: groups!,
      identify: () => disk.identity,
      // Calls name this cluster, and calls of another cluster are refused (a peer address pointing at one).
      clusterId: () => disk.identity.clusterId,
      security: clusterSecurity,
      logger: logger.child({ component: 'transport' }),
    });
    const security = clusterSecurity === 'insecure' ? ['none (insecure, local testing only)'] : [clusterSecurity.secret && 'cluster secret', clusterSecurity.tls && 'mutual TLS'].filter(Boolean);
    if (clusterSecurity === 'insecure') logger.warn('node-to-node calls are not authenticated (BROOK_INSECURE_CLUSTER): anyone who reaches the Raft port can change metadata');
    logger.info({ raftPort: transport.port, peers: others, authentication: security }, 'raft transport listening');
  }
  // The node's Raft host runs every group of the node, the metadata group (group 0) included: one
  // turn writes and fsyncs them all. It starts (ticks, sends) before any group joins it.
  if (transport !== undefined) {
    const t = transport;
    raftHost.start({ send: (msgs) => t.send(msgs), ping: (quietMs) => t.ping(quietMs) });
  } else raftHost.start(undefined);
  const t1 = transport;
  const founders = await foundOrJoin(disk, self, others.map((p) => p.id), t1 === undefined ? undefined : (p) => t1.identify(p, disk.identity.diskId, 1000), logger.child({ component: 'founding' }));
  const reactions = metadataReactions({
    topics,
    placements,
    replicas: replicaSet,
    router,
    validators,
    openStreams,
    state: () => metadataRef?.state,
    hub: () => hub,
    mover: () => mover,
    replacer: () => replacer,
    partitionReplacer: () => partitionReplacer,
    logger,
  });
  // The metadata group's own accepted loss is recorded once the loss service exists (below).
  let lossesRef: LossService | undefined;
  let metadataLoss: MetadataLossFacts | undefined;
  let lossesStopped = false;
  const metadata = await RaftMetadataGroup.open({
    self,
    // A directory that joined as a new member runs under its own member id (core/member-id.ts); one
    // that holds no metadata state and does not found the group makes one (metadata-restore.ts).
    member: disk.metadataMember,
    newMember: () => disk.newMetadataMember(),
    // One whose partition groups hold records keeps its member id: they were written under it.
    partitionState: () => orphanedByNewMember(disk, kv, storagesDir(config.dataDir)),
    incarnation,
    kv,
    host: raftHost,
    disk,
    acceptLoss: config.acceptMetadataLoss,
    onLossAccepted: (f) => {
      if (lossesRef === undefined) metadataLoss = f;
      else lossesRef.metadataLossAccepted(f);
    },
    founders,
    directory,
    tickMs: config.raftTickMs,
    electionTicks: config.raftElectionTicks,
    heartbeatTicks: config.raftHeartbeatTicks,
    snapshotEntries: config.raftSnapshotEntries,
    proposalTimeoutMs: config.metadataTimeoutMs,
    readLeases: metadataReadLeases(config.raftTickMs * config.raftElectionTicks),
    clock,
    random: systemRandom,
    logger: logger.child({ component: 'raft' }),
    onApplied: (cmd, result) => {
      if (cmd.op === 'node.disk' && cmd.node === self && result.ok) checkSuperseded(supersededGuard, metadataRef?.state.disk(self));
      reactions.onApplied(cmd, result);
    },
    onRestored: (sm) => {
      checkSuperseded(supersededGuard, sm.disk(self));
      reactions.onRestored(sm);
    },
    onFatal: (err) => fatal?.(err),
    onLeaderChange: () => leaderChanges++,
  });
  metadataRef = metadata;
  metadataOpened = true;
  // What it restored from its own log may tell already (it ran, and learned it, before): refuse to start.
  checkSuperseded(supersededGuard, metadata.state.disk(self));
  metadataForPlacement = metadata;
  if (transport !== undefined) groups!.register(metadataGroup, metadata.transportHandler());
  metadata.start(transport);
  if (transport !== undefined) {
    const t = transport;
    replicas.setForwarder(forwarderOf(t));
  }
  // Logs of event types deleted just before a crash: their drop was not finished, finish it now.
  for (const topic of await replicaSet.deletedTopicsStored(metadata.state)) {
    logger.info({ topic }, 'dropping the logs of an event type deleted before the last stop');
    await replicas.dropTopic(topic);
  }
  // Open every partition this node replicates, so bounds and reads are served from the start.
  for (const r of metadata.state.eventTypes()) await replicaSet.open(r);
  replacer = new MetadataMemberReplacer(metadata, logger.child({ component: 'raft' }));
  partitionReplacer = new PartitionMemberReplacer({
    isLeader: () => metadata.isLeader(),
    placements: () => placedPartitions(metadata.state.eventTypes(), legacyReplica),
    registrations: () => metadata.state.disks(),
    propose: (cmd) => metadata.propose(cmd),
    logger: logger.child({ component: 'moves' }),
  });
  mover = new ReplicaMover({
    self,
    member: () => disk.metadataMember,
    stores: () => replicaSet.all(),
    placement: (topic, partition) => placement(topic, partition),
    formerMember,
    propose: (cmd) => metadata.propose(cmd),
    logger: logger.child({ component: 'moves' }),
  });
  await router.openInUse(metadata.state.eventTypes());
  // Replicas moved away while this node was down: the others hold them, the data here goes.
  await mover.dropStored();
  const reader = {
    eventType: (name: string) => metadata.state.eventType(name),
    eventTypes: () => metadata.state.eventTypes(),
    eventTypeCount: () => metadata.state.eventTypeCount(),
    limits: () => metadata.state.limits,
  };
  // The metadata bounds are replicated (metadata/limits.ts): this node proposes its configured ones
  // when they differ from those in force. A single node does it before it serves, so its first request
  // already meets them; in a cluster the leader may not be known yet, so it keeps trying meanwhile.
  const configuredLimits: MetadataLimits = {
    eventTypesMax: config.eventTypesMax,
    subscriptionsMax: config.subscriptionsMax,
    schemaVersionsMax: config.schemaVersionsMax,
    schemaBytesMax: config.schemaBytesMax,
    partitionsMax: config.partitionsMax,
    subscriptionPartitionsMax: config.subscriptionPartitionsMax,
    metadataBytesMax: config.metadataBytesMax,
    timelinesMax: config.timelinesMax,
  };
  const proposeLimits = async (): Promise<void> => {
    const inForce = metadata.state.limits;
    if (metadataLimitKeys.every((k) => inForce[k] === configuredLimits[k])) return;
    const r = await metadata.propose({ op: 'limits.set', limits: configuredLimits });
    logger.info({ limits: configuredLimits, previous: inForce, ok: r.ok }, 'metadata bounds set from this node\'s configuration');
  };
  if (metadata.isSingleNode()) await proposeLimits();

  const features = new FeatureService(() => metadata.state, metadata);
  // Placement of new partitions and replica moves: over the metadata group's voters and learners, as
  // this node sees them, by member id (one per node: a wiped node's new member, not its former one,
  // which nobody runs any more; the view's `members` are node ids).
  const members: MembersSource = {
    members: () => currentMembers(metadata.view().metadata.members.map((m) => m.id)),
    replicationFactor: config.replicationFactor === 0 ? undefined : config.replicationFactor,
    // Partitions created before placement existed stay where they are: on the lowest founding node, which
    // is this node in a cluster of one (see metadata/placement-of.ts).
    legacyReplica,
  };
  const eventTypes = new EventTypeService({
    reader,
    proposer: metadata,
    features,
    members,
    options: {
      partitionsDefault: config.partitionsDefault,
      partitionsMax: config.partitionsMax,
      retentionTimeMsDefault: config.retentionTimeMsDefault,
      retentionTimeMsMin: config.retentionTimeMsMin,
      retentionTimeMsMax: config.retentionTimeMsMax,
      schemaBytesMax: config.schemaBytesMax,
      schemaDepthMax: config.schemaDepthMax,
      schemaObjectsMax: config.schemaObjectsMax,
      schemaEnumValuesMax: config.schemaEnumValuesMax,
    },
    clock,
  });
  // Timeline switches from any node: prepare, seal every partition, commit (timeline-switch.ts).
  const switcher = new TimelineSwitcher({
    state: () => metadata.state,
    propose: (cmd) => metadata.propose(cmd),
    seal: (t, partition, to, deadlineMs) => router.sealLog(t, partition, to, deadlineMs),
    clock,
    logger: logger.child({ component: 'timelines' }),
    sealTimeoutMs: config.metadataTimeoutMs,
    staleAfterMs: 10_000,
  });
  switcherRef = switcher;
  const cursors = new CursorResolver(router);
  // An operator's acceptance of a damaged sole replica's loss (docs/replication.md).
  const losses = new LossService({
    placed: () => placedPartitions(metadata.state.eventTypes(), legacyReplica),
    replicas: () => replicaSet.all(),
    self: config.nodeId,
    formatCursor: (name, partition, offset) => {
      const rec = metadata.state.eventType(name);
      return rec === undefined ? String(offset) : cursors.formatCursor(rec, partition, offset as Offset);
    },
    nowMs: () => clock.nowMs(),
    monotonicMs: () => clock.monotonicMs(),
    logger: logger.child({ component: 'losses' }),
    newId: randomUUID,
    recorded: () => metadata.state.acceptedLosses,
    record: (loss) =>
      recordLoss(
        {
          propose: (cmd) => metadata.propose(cmd),
          recorded: (id) => metadata.state.acceptedLosses.records.some((r) => r.id === id),
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          stopped: () => lossesStopped,
          retryMs: 500,
          logger: logger.child({ component: 'losses' }),
        },
        loss,
      ),
    // A partition of several replicas (broker/group-loss.ts): each other node reports its replica over
    // HTTP, with the operator's credentials (the route is administrator-only on every node).
    askPeer: async (node, group, authorization) => {
      const address = directory.find((m) => m.id === node)?.httpAddress;
      if (address === undefined) return undefined;
      try {
        const res = await fetch(`http://${address}/cluster/partitions/${group}/replica`, { headers: authorization === undefined ? {} : { authorization }, signal: AbortSignal.timeout(5000) });
        return res.ok ? ((await res.json()) as ReplicaReportAnswer) : undefined;
      } catch {
        return undefined;
      }
    },
    propose: (cmd) => metadata.propose(cmd),
  });
  lossesRef = losses;
  if (metadataLoss !== undefined) losses.metadataLossAccepted(metadataLoss);
  const subscriptions = new SubscriptionService({
    reader: {
      eventType: (name: string) => metadata.state.eventType(name),
      subscription: (id: string) => metadata.state.subscription(id),
      subscriptions: () => metadata.state.subscriptions(),
      subscriptionCount: () => metadata.state.subscriptionCount(),
      subscriptionsMax: () => metadata.state.limits.subscriptionsMax,
    },
    proposer: metadata,
    clock,
    newId: randomUUID,
    checkCursor: (rec, partition, offset) => void cursors.resolve(rec, partition, offset),
    options: { partitionsMax: config.subscriptionPartitionsMax },
    features,
  });
  const metrics = new BrokerMetrics({
    version: brookVersion(),
    processMetrics: config.processMetrics,
    nowMs: () => clock.nowMs(),
    sources: {
      raft: () => {
        const v = metadata.view();
        return { term: v.metadata.term, commitIndex: v.metadata.commit_index, appliedIndex: v.metadata.applied_index, isLeader: v.metadata.leader === self, leaderChanges };
      },
      openStreams: (kind) => openStreams.count(kind),
      storageBytes: () => directoryBytes(config.dataDir),
      subscriptionLag: () => subscriptionLag(metadata.state.subscriptions(), (id) => hub!.stats(id)),
      raftHost: () => raftHost.stats,
      raftMessages: () => raftHost.messageTypes,
      readLeases: () => metadata.leaseStats,
      appendStream: () => transport?.appendStreamStats(),
    },
  });
  fsyncObserver = (durationMs) => metrics.fsynced(durationMs);
  phaseObserver = (phase, durationMs) => metrics.raftHostPhase(phase, durationMs);
  hub = new SubscriptionHub({
    observer: metrics,
    state: () => metadata.state,
    propose: (cmd) => metadata.propose(cmd),
    reader: router,
    cursors,
    clock,
    newId: randomUUID,
    node: self,
    incarnation,
    logger: logger.child({ component: 'subscriptions' }),
  });
  const publisher = new Publisher({
    eventTypes: reader,
    validators: { validatorFor: (rec: EventTypeRecord) => validators.validatorFor(rec.eventType, rec.eventType.schema) },
    writer: new StorePartitionWriter(router),
    clock,
    random: systemRandom,
    features,
    pause: () => new Promise<void>((resolve) => setImmediate(resolve)),
  });
  const { app, closeStreams, inFlight } = buildApp({
    logger,
    clock,
    http: {
      publishBodyBytesMax: config.publishBodyBytesMax,
      // An event type's body carries its schema as an escaped string: up to twice its bytes.
      bodyBytesMax: Math.max(otherBodyBytesMax, 2 * config.schemaBytesMax + 64 * 1024),
      requestTimeoutMs: config.httpRequestTimeoutMs,
      bodyIdleTimeoutMs: config.httpBodyIdleTimeoutMs,
    },
    eventTypes,
    features,
    subscriptions,
    hub,
    auth: { authenticator, options: { scopePrefix: config.authScopePrefix, eventTypeDeletionAdminOnly: config.eventTypeDeletionAdminOnly } },
    access: new ResourceAccess({ blacklisted: (type, name) => metadata.state.blacklisted(type, name) }),
    openStreams,
    observer: metrics,
    metrics,
    blacklist: new BlacklistService(() => metadata.state, metadata),
    timelines: new TimelineService({ state: () => metadata.state, propose: (cmd) => metadata.propose(cmd), switcher, members }),
    publisher,
    reader: router,
    cursors,
    limiter: new ConnectionLimiter(config.lowLevelConnectionsPerPartitionMax),
    moves: new MoveService({
      eventTypes: () => metadata.state.eventTypes(),
      members: () => members.members(),
      propose: (cmd) => metadata.propose(cmd),
      legacyReplica,
    }),
    losses,
    cluster: {
      // This node's view: the metadata group, and every partition with its placement and what this
      // node knows of its group (a leader knows its followers' progress; a follower only itself); and
      // this data directory's cluster and disk ids.
      view: () => ({
        ...metadata.view(),
        // A follower the transport cannot reach reported nothing: its partitions are under-replicated.
        ...clusterPartitions(placedPartitions(metadata.state.eventTypes(), legacyReplica), replicaSet.facts((peer) => transport?.reachable(peer) ?? true)),
        cluster_id: disk.identity.clusterId,
        disk_id: disk.identity.diskId,
        ...losses.view(),
      }),
      readBarrier: () => metadata.readBarrier(),
      publishBarrier: () => metadata.publishBarrier(),
      answerBarrier: () => metadata.answerBarrier(),
      cursorCatchUpMs: () => (metadata.isSingleNode() ? 0 : 2000),
    },
  });
  // Leadership back to preferred leaders after failovers and restarts (partition-replicas.ts); and the
  // metadata leader finishes timeline switches left pending by a node that stopped in the middle.
  // And a replica placed here whose open failed (a full disk when a move added it or at the start) is
  // opened again: the start and moveApplied try once.
  const balancer = setInterval(() => {
    replicaSet.balanceLeaders();
    if (metadata.isLeader()) switcher.finishPending();
    replicaSet.reopenMissing();
  }, 5000);
  balancer.unref();
  // Replica moves: each partition leader takes the next step of a move in flight (replica-mover.ts).
  // And the metadata leader replaces a member whose directory was wiped (metadata-members.ts).
  const moves = setInterval(() => {
    mover?.round();
    replacer?.round();
    partitionReplacer?.round();
  }, 250);
  moves.unref();
  // Sessions of subscription streams on a node that stays down are closed by the metadata leader.
  const t0 = transport;
  const reaper = t0 === undefined ? undefined : new SessionReaper({
    isLeader: () => metadata.isLeader(),
    peers: () => others.map((p) => p.id),
    reachable: (n) => t0.reachable(n),
    holdsSessions: (n) => [...metadata.state.runtimes()].some((rt) => rt.sessions.some((x) => x.node === n)),
    propose: (cmd) => metadata.propose(cmd),
    nowMs: () => clock.nowMs(),
    monotonicMs: () => clock.monotonicMs(),
    logger: logger.child({ component: 'subscriptions' }),
    afterMs: commitTimeoutSecondsMax * 1000,
  });
  const reaperTimer = setInterval(() => void reaper?.check().catch((err: unknown) => logger.warn({ err }, 'closing the sessions of an unreachable node failed; retried')), 5000);
  reaperTimer.unref();
  // Bounds of partitions held on other nodes only (clusters larger than the replication factor).
  const remoteBounds = setInterval(() => replicaSet.refreshRemoteBounds(), 1000);
  remoteBounds.unref();
  const retention = startRetention(config.retentionCheckIntervalMs, () => metadata.state.eventTypes(), router, clock, logger.child({ component: 'retention' }));

  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info({ url, dataDir: config.dataDir }, 'brook is ready');
  // Sessions of streams that died with this node's previous process hold partitions: close them. In a
  // multi-node cluster the leader may not be known yet, so keep trying in the background.
  let stopped = false;
  void registerDisk({
    node: self,
    token: () => diskTokenOf(disk.identity),
    foundingDisk: () => isFoundingDisk(disk.identity),
    member: () => disk.identity.metadataMember,
    registered: () => metadata.state.disk(self),
    propose: (cmd) => metadata.propose(cmd),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    stopped: () => stopped,
    retryMs: 500,
    logger: logger.child({ component: 'disk' }),
  });
  void (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await proposeLimits();
        await hub.closeStaleSessions();
        return;
      } catch (err) {
        if (attempt % 10 === 0) logger.warn({ err }, 'closing the stream sessions of the previous run failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();

  let closing: Promise<void> | undefined;
  const broker: RunningBroker = {
    url,
    port,
    close() {
      closing ??= (async () => {
        logger.info('shutting down');
        stopped = true;
        lossesStopped = true;
        closeStreams();
        const closed = app.close();
        // Streams end and their sessions close (replicated) while the metadata group still runs.
        await hub.drain();
        // server.close() waits for every connection, also those a client opened and never used (undici
        // pools do this); once the requests in flight have answered, cut what is left.
        const graceEnd = clock.monotonicMs() + config.shutdownGraceMs / 2;
        while (inFlight() > 0 && clock.monotonicMs() < graceEnd) await new Promise((r) => setTimeout(r, 20));
        app.server.closeAllConnections();
        await closed;
        clearInterval(balancer);
        clearInterval(moves);
        clearInterval(reaperTimer);
        clearInterval(remoteBounds);
        await retention.stop();
        await metadata.close();
        await transport?.close();
        await router.close();
        await replicas.close();
        await raftHost.close();
        await store.close();
        await disk.close();
        await kv.close();
        logger.info('shutdown complete');
      })();
      return closing;
    },
  };
  fatalRef = (err) => fatal?.(err);
  fatal = (err) => {
    // The metadata log could not be written (or an invariant failed): this node must not go on.
    logger.fatal({ err }, 'metadata group failed; stopping');
    void broker.close().finally(() => process.exit(70));
  };
  return broker;
}

async function run(): Promise<void> {
  // V8 pretenures an allocation site once most of its objects survive young-generation collections.
  // Under large batches (hundreds of requests in flight for tens of ms) the publish path's sites qualify,
  // and the decision sticks: when the load later turns into many small, short requests, their objects
  // are allocated straight into the old generation, which then fills with garbage and runs a full
  // mark-compact every second or so. Measured (docs/benchmarks.md, 2026-11-25): 11-17 full GCs per
  // bench run instead of 39-50, and a lower p99 at 5,000 ev/s after a large-batch phase.
  setFlagsFromString('--no-allocation-site-pretenuring');
  let config: Config;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`brook: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel, nodeId: String(config.nodeId) });
  let broker: RunningBroker;
  try {
    broker = await startBroker(config, logger);
  } catch (err) {
    logger.fatal({ err }, 'start failed');
    process.exit(1);
  }
  let signals = 0;
  const stop = (signal: string) => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without a clean shutdown');
      process.exit(1);
    }
    logger.info({ signal }, 'signal received');
    const force = setTimeout(() => {
      logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    broker.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.fatal({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('uncaughtException', (err) => {
    // An invariant violation or a bug: the state may be inconsistent, so stop rather than serve.
    logger.fatal({ err }, 'uncaught exception; exiting');
    process.exit(70);
  });
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) void run();

/** How the partition groups of a storage reach those on other nodes: the node's transport. */
function forwarderOf(t: GrpcTransport): AppendForwarder {
  return {
    forwardAppend: (to, req) => t.forwardAppend(to, req),
    forwardAppendMany: (to, reqs) => t.forwardAppendMany(to, reqs),
    fetchLog: (to, req, signal) => t.fetchLog(to, req, signal),
    read: (to, req, signal) => t.read(to, req, signal),
    bounds: (to, req) => t.bounds(to, req),
    forwardControl: (to, req) => t.forwardControl(to, req),
  };
}
