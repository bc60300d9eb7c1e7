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
import type { Logger } from 'pino';
import { loadConfig, ConfigError, type Config } from './config/config.js';
import { createLogger } from './observability/logger.js';
import { openRocksKv, PartitionStore } from './log/index.js';
import { LocalMetadataLog } from './broker/metadata-log.js';
import { systemClock, systemRandom } from './broker/system.js';
import { startRetention } from './broker/retention.js';
import { StorePartitionWriter } from './broker/partition-writer.js';
import { EventTypeService } from './registry/event-type-service.js';
import { SchemaValidatorCache } from './registry/index.js';
import { Publisher } from './publishing/publish.js';
import { CursorResolver } from './consumption/cursors.js';
import { ConnectionLimiter } from './consumption/connection-limiter.js';
import { buildApp } from './api/app.js';
import type { EventTypeRecord } from './metadata/types.js';

export interface RunningBroker {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startBroker(config: Config, logger: Logger = createLogger({ level: config.logLevel, nodeId: config.nodeId })): Promise<RunningBroker> {
  const clock = systemClock;
  logger.info({ config }, 'starting brook');

  const kv = await openRocksKv(config.dataDir);
  const store = await PartitionStore.open(kv, {
    clock,
    logger: logger.child({ component: 'log' }),
    tailCacheBytesMax: config.tailCacheBytesMax,
  });
  const validators = new SchemaValidatorCache();
  const metadata = await LocalMetadataLog.open(kv, (cmd, result) => {
    if (!result.ok || cmd.op !== 'event_type.delete') return;
    validators.forget(cmd.name);
    const topic = result.droppedTopic;
    if (topic !== undefined) {
      // Removal is asynchronous (interface.md); a re-created name gets a fresh topic, so it never sees these logs.
      store.dropTopic(topic).catch((err: unknown) => logger.error({ err, topic }, 'dropping the logs of a deleted event type failed'));
    }
  });
  // Logs of event types deleted just before a crash: their drop was not finished, finish it now.
  const live = new Set([...metadata.state.eventTypes()].map((r) => r.storage.topic));
  for (const topic of store.topics()) {
    if (!live.has(topic)) {
      logger.info({ topic }, 'dropping the logs of an event type deleted before the last stop');
      await store.dropTopic(topic);
    }
  }
  const reader = {
    eventType: (name: string) => metadata.state.eventType(name),
    eventTypes: () => metadata.state.eventTypes(),
  };

  const eventTypes = new EventTypeService({
    reader,
    proposer: metadata,
    options: {
      partitionsDefault: config.partitionsDefault,
      partitionsMax: config.partitionsMax,
      retentionTimeMsDefault: config.retentionTimeMsDefault,
      retentionTimeMsMin: config.retentionTimeMsMin,
      retentionTimeMsMax: config.retentionTimeMsMax,
    },
    clock,
  });
  const publisher = new Publisher({
    eventTypes: reader,
    validators: { validatorFor: (rec: EventTypeRecord) => validators.validatorFor(rec.eventType, rec.eventType.schema) },
    writer: new StorePartitionWriter(store),
    clock,
    random: systemRandom,
  });
  const { app, closeStreams } = buildApp({
    logger,
    clock,
    eventTypes,
    publisher,
    reader: store,
    cursors: new CursorResolver(store),
    limiter: new ConnectionLimiter(config.lowLevelConnectionsPerPartitionMax),
  });
  const retention = startRetention(config.retentionCheckIntervalMs, () => metadata.state.eventTypes(), store, clock, logger.child({ component: 'retention' }));

  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info({ url, dataDir: config.dataDir }, 'brook is ready');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        logger.info('shutting down');
        closeStreams();
        await app.close();
        await retention.stop();
        await metadata.idle();
        await store.close();
        await kv.close();
        logger.info('shutdown complete');
      })();
      return closing;
    },
  };
}

async function run(): Promise<void> {
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
  const logger = createLogger({ level: config.logLevel, nodeId: config.nodeId });
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
