/**
 * A cut between two nodes only (the ends of a "bridge": each still reaches the third node, which
 * reaches both), with the method of src/testing/partition.ts: each end's process goes into a cgroup of
 * its own and its new TCP connections to the other end's Raft port are dropped, and so are the
 * connections the two already had open to each other (found in /proc by local port, both directions).
 * Client HTTP is untouched. Rules and cgroups carry partition.ts' run tag (brook-partition-<pid>), so
 * its sweep() removes whatever a crash leaves behind.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { outgoingPorts, type Partition } from '../src/testing/partition.js';

export interface CutEnd {
  id: number;
  pid: number;
  raftPort: number;
}

function cgroup2Root(): string | undefined {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return '/sys/fs/cgroup';
  if (existsSync('/sys/fs/cgroup/unified/cgroup.procs')) return '/sys/fs/cgroup/unified';
  return undefined;
}

/** Cuts a and b off from each other (a bridge when a third node reaches both). */
export function cutBetween(a: CutEnd, b: CutEnd): Partition {
  const root = cgroup2Root();
  if (root === undefined) throw new Error('no cgroup v2 hierarchy: a pairwise cut needs one');
  const tag = `brook-partition-${process.pid}-cut${a.id}${b.id}`;
  const made: { dir: string; pid: number }[] = [];
  const rules: string[][] = [];
  const added: string[][] = [];
  const heal = (): void => {
    for (const r of added.splice(0).reverse()) spawnSync('iptables', ['-w', '-D', r[0]!, ...r.slice(1), '-m', 'comment', '--comment', tag, '-j', 'DROP'], { stdio: 'ignore' });
    for (const m of made.splice(0)) {
      try {
        writeFileSync(join(root, 'cgroup.procs'), String(m.pid));
      } catch {
        // it exited
      }
      try {
        rmdirSync(m.dir);
      } catch {
        // already gone
      }
    }
  };
  try {
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const name = `${tag}-n${from.id}`;
      const dir = join(root, name);
      mkdirSync(dir);
      made.push({ dir, pid: from.pid });
      writeFileSync(join(dir, 'cgroup.procs'), String(from.pid));
      rules.push(['OUTPUT', '-m', 'cgroup', '--path', name, '-p', 'tcp', '--dport', String(to.raftPort)]);
    }
    // Found after both moves: a connection opened meanwhile is either listed here or in a cgroup.
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      for (const port of outgoingPorts(from.pid, [to.raftPort])) {
        rules.push(['OUTPUT', '-p', 'tcp', '--sport', String(port)]);
        rules.push(['OUTPUT', '-p', 'tcp', '--dport', String(port)]);
      }
    }
    for (const r of rules) {
      execFileSync('iptables', ['-w', '-I', r[0]!, ...r.slice(1), '-m', 'comment', '--comment', tag, '-j', 'DROP']);
      added.push(r);
    }
  } catch (err) {
    heal();
    throw err;
  }
  return { heal };
}
