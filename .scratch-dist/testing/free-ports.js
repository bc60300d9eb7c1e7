/** TEST-ONLY: free loopback ports for the real-process cluster tests (cluster/ scripts' port layout). */
import { createServer } from 'node:net';
function portFree(port) {
    return new Promise((res) => {
        const srv = createServer();
        srv.once('error', () => res(false));
        srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
    });
}
/**
 * A base port such that base..base+n-1 (HTTP) and base+1000..base+1000+n-1 (Raft, as cluster/up places
 * them) are all free on 127.0.0.1.
 */
export async function freeClusterBase(nodes = 3) {
    for (let attempt = 0; attempt < 50; attempt++) {
        const base = 20_000 + Math.floor(Math.random() * 20_000);
        const ports = Array.from({ length: nodes }, (_, i) => [base + i, base + 1000 + i]).flat();
        if ((await Promise.all(ports.map(portFree))).every(Boolean))
            return base;
    }
    throw new Error('no free port range');
}
//# sourceMappingURL=free-ports.js.map