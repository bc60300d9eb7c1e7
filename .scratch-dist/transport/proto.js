/**
 * Loads proto/raft.proto and proto/forward.proto at run time (protobufjs through
 * @grpc/proto-loader) with the options the checked-in types in generated/ were produced with
 * (`npm run gen:proto`): int64 as decimal strings so no precision is lost, enums as their names,
 * snake_case field names, defaults filled in.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';
import { loadPackageDefinition } from '@grpc/grpc-js';
/**
 * proto/ at the repository root: the nearest one above this module (dist/transport/, src/transport/
 * and dist-bench/src/transport/ sit at different depths below the root).
 */
export const protoDir = findProtoDir(dirname(fileURLToPath(import.meta.url)));
export const raftProtoPath = join(protoDir, 'raft.proto');
export const forwardProtoPath = join(protoDir, 'forward.proto');
function findProtoDir(from) {
    for (let dir = from;; dir = dirname(dir)) {
        if (existsSync(join(dir, 'proto', 'raft.proto')))
            return join(dir, 'proto');
        if (dirname(dir) === dir)
            throw new Error(`proto/raft.proto not found above ${from}`);
    }
}
export const loaderOptions = {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [protoDir],
};
let loaded;
function load() {
    loaded ??= loadPackageDefinition(loadSync([raftProtoPath, forwardProtoPath], loaderOptions));
    return loaded;
}
export function raftProto() {
    return load().brook.raft.v1;
}
export function forwardProto() {
    return load().brook.forward.v1;
}
//# sourceMappingURL=proto.js.map