/** TEST-ONLY: free loopback ports for the real-process cluster tests (cluster/ scripts' port layout). */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

/**
 * The lowest port the kernel hands out to outgoing connections (Linux: ip_local_port_range; 32768 by
 * default). A node restarted by a test must bind its ports again; one inside that range can be taken
 * in between as the local port of any connection on the machine, and the restart then fails with
 * EADDRINUSE (seen: partition-replication.cluster, a follower restarted on its Raft port 36010).
 */
function ephemeralLow(): number {
  try {
    const lo = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isSafeInteger(lo) && lo > 0 ? lo : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A base port such that base..base+n-1 (HTTP) and base+1000..base+1000+n-1 (Raft, as cluster/up places
 * them) are all free on 127.0.0.1, and below the ephemeral range (ephemeralLow) when it leaves room.
 */
export async function freeClusterBase(nodes = 3): Promise<number> {
  const low = 10_000;
  const high = Math.max(low + 2_000, ephemeralLow() - 1_000 - nodes);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = low + Math.floor(Math.random() * (high - low));
    const ports = Array.from({ length: nodes }, (_, i) => [base + i, base + 1000 + i]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free port range');
}

/**
 * One free port below the ephemeral range, for a broker a test kills and starts again on the same port
 * (a port the kernel chose, inside that range, can be taken in between by any outgoing connection).
 */
export async function freeListenPort(): Promise<number> {
  const low = 10_000;
  const high = Math.max(low + 2_000, ephemeralLow() - 1);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await portFree(port)) return port;
  }
  throw new Error('no free port');
}
