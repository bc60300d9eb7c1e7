/**
 * Loads proto/raft.proto and proto/forward.proto at run time (protobufjs through
 * @grpc/proto-loader) with the options the checked-in types in generated/ were produced with
 * (`npm run gen:proto`): int64 as decimal strings so no precision is lost, enums as their names,
 * snake_case field names, defaults filled in.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import { loadPackageDefinition, makeClientConstructor, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import type { ProtoGrpcType as RaftProto } from './generated/raft.js';
import type { ProtoGrpcType as ForwardProto } from './generated/forward.js';
import { decodeMessageBatch, encodeMessageBatch } from './batch-wire.js';
import { decodeAppendStreamReply, decodeAppendStreamRequest, encodeAppendStreamReply, encodeAppendStreamRequest } from './append-wire.js';

/**
 * proto/ at the repository root: the nearest one above this module (dist/transport/, src/transport/
 * and dist-bench/src/transport/ sit at different depths below the root).
 */
export const protoDir = findProtoDir(dirname(fileURLToPath(import.meta.url)));
export const raftProtoPath = join(protoDir, 'raft.proto');
export const forwardProtoPath = join(protoDir, 'forward.proto');

function findProtoDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'proto', 'raft.proto'))) return join(dir, 'proto');
    if (dirname(dir) === dir) throw new Error(`proto/raft.proto not found above ${from}`);
  }
}

export const loaderOptions: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [protoDir],
};

let loaded: (RaftProto & ForwardProto) | undefined;

function load(): RaftProto & ForwardProto {
  loaded ??= loadPackageDefinition(loadSync([raftProtoPath, forwardProtoPath], loaderOptions)) as unknown as RaftProto & ForwardProto;
  return loaded;
}

export function raftProto(): RaftProto['brook']['raft']['v1'] {
  return load().brook.raft.v1;
}

export function forwardProto(): ForwardProto['brook']['forward']['v1'] {
  return (load() as unknown as ForwardProto).brook.forward.v1;
}

let raftAsNumbers: ReturnType<typeof loadSync> | undefined;

/** raft.proto's definitions as loaded with 64-bit fields decoded as numbers (not decimal strings). */
export function raftDefinitionsAsNumbers(): ReturnType<typeof loadSync> {
  raftAsNumbers ??= loadSync([raftProtoPath], { ...loaderOptions, longs: Number });
  return raftAsNumbers;
}

let raftService: ServiceDefinition | undefined;

/**
 * The RaftTransport service as the server adds it and the peers' clients call it: as loaded, except
 * that the Raft stream's batches are written and read by batch-wire.ts, with 64-bit fields as numbers
 * (not decimal strings: a Long conversion per term, index and node id both ways, on every message).
 * codec.ts's decodeU64 takes both forms and refuses a number that is not a safe integer (a value above
 * 2^53 decodes inexact), as it refused such a string; the other calls keep proto-loader's pair and the
 * strings of the checked-in types in generated/.
 */
export function raftServiceDefinition(): ServiceDefinition {
  if (raftService !== undefined) return raftService;
  const loadedAsStrings = raftProto().RaftTransport.service as unknown as ServiceDefinition;
  // The batches are written and read by batch-wire.ts, straight between bytes and the plain objects
  // (proto-loader's pair goes through protobufjs message instances and a Long per 64-bit field).
  raftService = {
    ...loadedAsStrings,
    Stream: { ...loadedAsStrings['Stream']!, requestSerialize: encodeMessageBatch, requestDeserialize: decodeMessageBatch },
  };
  return raftService;
}

let raftClient: ServiceClientConstructor | undefined;

/** The RaftTransport client class over raftServiceDefinition (the Raft stream's batches written by batch-wire.ts). */
export function raftClientConstructor(): ServiceClientConstructor {
  raftClient ??= makeClientConstructor(raftServiceDefinition(), 'brook.raft.v1.RaftTransport');
  return raftClient;
}

let forwardService: ServiceDefinition | undefined;

/**
 * The Forward service with the append stream's messages written and read by append-wire.ts, 64-bit
 * fields as numbers, as the Raft stream's are (above): every small forwarded publish crosses that
 * stream twice. The checks of forward-codec.ts take both forms.
 */
export function forwardServiceDefinition(): ServiceDefinition {
  if (forwardService !== undefined) return forwardService;
  const loadedAsStrings = forwardProto().Forward.service as unknown as ServiceDefinition;
  // Written and read by append-wire.ts, straight between bytes and the plain objects (as batch-wire.ts
  // does for the Raft stream).
  forwardService = {
    ...loadedAsStrings,
    AppendStream: {
      ...loadedAsStrings['AppendStream']!,
      requestSerialize: encodeAppendStreamRequest,
      requestDeserialize: decodeAppendStreamRequest,
      responseSerialize: encodeAppendStreamReply,
      responseDeserialize: decodeAppendStreamReply,
    },
  };
  return forwardService;
}

let forwardClient: ServiceClientConstructor | undefined;

/** The Forward client class over forwardServiceDefinition (append stream replies decoded as numbers). */
export function forwardClientConstructor(): ServiceClientConstructor {
  forwardClient ??= makeClientConstructor(forwardServiceDefinition(), 'brook.forward.v1.Forward');
  return forwardClient;
}
