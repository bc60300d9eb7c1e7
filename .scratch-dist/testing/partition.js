/**
 * TEST-ONLY: network partitions with iptables, for the real-process tests
 * (src/broker/metadata-group.cluster.test.ts and jepsen-like-tests/): the
 * isolated node's process goes into a cgroup of its own and every TCP packet it sends, except its
 * HTTP replies, is dropped, as is every packet to its Raft port. A socket keeps the cgroup it was
 * created in, so the cgroup rule misses the connections the node opened to its peers before it was
 * moved (measured: 0 packets matched, and the "isolated" node kept sending Raft messages and forwarding
 * proposals to the others). Those connections are found through /proc and dropped by their local
 * port, in both directions; the ones the node opens afterwards are in the cgroup. Clients can still reach its HTTP
 * port, so they see what a real client of a cut-off node sees (timeouts, 503s). Every rule carries a
 * comment with this run's tag so that sweep() can remove anything left behind, even after a crash
 * between adding a rule and remembering it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const runTag = `brook-partition-${process.pid}`;
function cgroup2Root() {
    if (existsSync('/sys/fs/cgroup/cgroup.controllers'))
        return '/sys/fs/cgroup';
    if (existsSync('/sys/fs/cgroup/unified/cgroup.procs'))
        return '/sys/fs/cgroup/unified';
    return undefined;
}
/** Why partitions cannot be made here, or undefined when they can. */
export function partitionUnsupported() {
    if (process.getuid?.() !== 0)
        return 'not root';
    try {
        execFileSync('iptables', ['-w', '-L', 'OUTPUT', '-n'], { stdio: 'ignore' });
    }
    catch {
        return 'iptables is missing or not permitted (apt-get install iptables)';
    }
    return undefined;
}
/**
 * Local ports of the TCP connections process `pid` has open to any of `remotePorts` (its outgoing
 * connections to the peers' Raft ports): its socket inodes from /proc/<pid>/fd matched against the
 * namespace's /proc/net/tcp{,6} tables.
 */
export function outgoingPorts(pid, remotePorts) {
    const inodes = new Set();
    try {
        for (const fd of readdirSync(`/proc/${pid}/fd`)) {
            try {
                const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
                if (m)
                    inodes.add(m[1]);
            }
            catch {
                // closed meanwhile
            }
        }
    }
    catch {
        return [];
    }
    const ports = new Set();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
        let text = '';
        try {
            text = readFileSync(table, 'utf8');
        }
        catch {
            continue;
        }
        for (const line of text.split('\n').slice(1)) {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            const f = line.trim().split(/\s+/);
            if (f.length < 10 || !inodes.has(f[9]))
                continue;
            const local = parseInt(f[1].split(':')[1], 16);
            const remote = parseInt(f[2].split(':')[1], 16);
            if (remotePorts.includes(remote))
                ports.add(local);
        }
    }
    return [...ports];
}
/**
 * Cuts node i (process `pid`, HTTP port httpPort, Raft port raftPort) off from the other nodes, whose
 * Raft ports are peerRaftPorts.
 */
export function isolate(i, pid, httpPort, raftPort, peerRaftPorts) {
    const tag = `${runTag}-node${i}`;
    const rules = [];
    const root = cgroup2Root();
    let cgroupDir;
    if (root !== undefined) {
        try {
            const dir = join(root, tag);
            mkdirSync(dir);
            cgroupDir = dir;
            writeFileSync(join(dir, 'cgroup.procs'), String(pid));
            rules.push(['OUTPUT', '-m', 'cgroup', '--path', tag, '-p', 'tcp', '!', '--sport', String(httpPort)]);
        }
        catch {
            // No cgroup for us: port rules only (the node still reaches out but hears nothing back).
        }
    }
    rules.push(['INPUT', '-p', 'tcp', '--dport', String(raftPort)]);
    rules.push(['OUTPUT', '-p', 'tcp', '--sport', String(raftPort)]);
    // Found after the move, so that a connection opened meanwhile is either here or in the cgroup.
    for (const port of outgoingPorts(pid, peerRaftPorts)) {
        rules.push(['OUTPUT', '-p', 'tcp', '--sport', String(port)]);
        rules.push(['OUTPUT', '-p', 'tcp', '--dport', String(port)]);
    }
    const added = [];
    const heal = () => {
        for (const r of added.splice(0).reverse()) {
            spawnSync('iptables', ['-w', '-D', r[0], ...r.slice(1), '-m', 'comment', '--comment', tag, '-j', 'DROP'], { stdio: 'ignore' });
        }
        if (cgroupDir !== undefined) {
            removeCgroup(root, cgroupDir, pid);
            cgroupDir = undefined;
        }
    };
    try {
        for (const r of rules) {
            execFileSync('iptables', ['-w', '-I', r[0], ...r.slice(1), '-m', 'comment', '--comment', tag, '-j', 'DROP']);
            added.push(r);
        }
    }
    catch (err) {
        heal();
        throw err;
    }
    return { heal };
}
function removeCgroup(root, dir, pid) {
    // Move the node back to the root cgroup (if it still runs) so the directory can be removed.
    try {
        writeFileSync(join(root, 'cgroup.procs'), String(pid));
    }
    catch {
        // it exited
    }
    try {
        rmdirSync(dir);
    }
    catch {
        // already gone
    }
}
/** Removes every rule and cgroup of this run (the last line of defence in the final cleanup). */
export function sweep() {
    let rules = 0;
    let cgroups = 0;
    if (partitionUnsupported() === undefined) {
        const listed = spawnSync('iptables', ['-w', '-S'], { encoding: 'utf8' }).stdout ?? '';
        for (const line of listed.split('\n')) {
            if (!line.startsWith('-A ') || !line.includes(runTag))
                continue;
            // "-A CHAIN spec..." -> "-D CHAIN spec..."; the comment is quoted only when it has spaces (ours has none).
            const args = line.replace(/^-A /, '-D ').split(' ');
            if (spawnSync('iptables', ['-w', ...args], { stdio: 'ignore' }).status === 0)
                rules++;
        }
    }
    const root = cgroup2Root();
    if (root !== undefined) {
        for (const d of readdirSync(root)) {
            if (!d.startsWith(runTag))
                continue;
            let inside = [];
            try {
                inside = readFileSync(join(root, d, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '');
            }
            catch {
                // gone meanwhile
            }
            for (const pid of inside) {
                try {
                    writeFileSync(join(root, 'cgroup.procs'), pid);
                }
                catch {
                    // exited
                }
            }
            try {
                rmdirSync(join(root, d));
                cgroups++;
            }
            catch {
                // still busy; reported by the caller's check
            }
        }
    }
    return { rules, cgroups };
}
//# sourceMappingURL=partition.js.map