/**
 * Loads proto/raft.proto at run time (protobufjs through @grpc/proto-loader) with the options the
 * checked-in types in generated/ were produced with (`npm run gen:proto`): int64 as decimal strings
 * so no precision is lost, enums as their names, snake_case field names, defaults filled in.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import { loadPackageDefinition } from '@grpc/grpc-js';
import type { ProtoGrpcType } from './generated/raft.js';

/**
 * proto/raft.proto at the repository root: the nearest one above this module (dist/transport/,
 * src/transport/ and dist-bench/src/transport/ sit at different depths below the root).
 */
export const raftProtoPath = findProto(dirname(fileURLToPath(import.meta.url)));

function findProto(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'proto', 'raft.proto');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`proto/raft.proto not found above ${from}`);
  }
}

export const loaderOptions: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

let loaded: ProtoGrpcType['brook']['raft']['v1'] | undefined;

export function raftProto(): ProtoGrpcType['brook']['raft']['v1'] {
  if (loaded === undefined) {
    const def = loadSync(raftProtoPath, loaderOptions);
    loaded = (loadPackageDefinition(def) as unknown as ProtoGrpcType).brook.raft.v1;
  }
  return loaded;
}
