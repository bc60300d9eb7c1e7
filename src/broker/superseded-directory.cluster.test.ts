// Goal: a data directory brought back after its node joined again with a new one (a backup restored,
// two directories swapped) takes no part in any raft group: the node stops with a line that says what
// to do, and the cluster goes on (docs/metadata-raft.md, "An old data directory that runs again").
// Method: cluster/up 3 in a temporary directory on free ports; an event type with events; node W (not
// the metadata leader) killed, its data directory copied aside and removed, W restarted: it joins as
// a new member, which the leader puts in its former member's place. Then W killed, its new directory
// set aside and the old copy put back, W started: its log of that run, its process gone. Then the new
// directory put back: W runs again and the cluster takes a write through it. Twice: the founder's
// directory (it runs the node id) and then the first new member's directory (a new member id).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';

interface View {
  metadata: { member: number; members: { id: number; node: number; suffrage: string }[] };
}

const cluster = await LocalCluster.create('brook-superseded-directory-test-', { BROOK_METADATA_TIMEOUT_MS: '2000' });
const url = (i: number) => cluster.url(i);
const view = (i: number) => cluster.view<View>(i);
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => cluster.until(what, timeoutMs, probe);
/** The process has exited (a zombie left unreaped by the container's init counts as exited, as in cluster/up). */
const gone = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true;
  } catch {
    return true;
  }
};

async function kill(i: number): Promise<void> {
  const pid = cluster.kill9(i);
  await until(`node ${i} (pid ${pid}) to be gone`, 10_000, async () => (gone(pid) ? true : undefined));
}

test('an old data directory started after its node rejoined with a new one stops with what to do; the cluster goes on', { timeout: 150_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  try {
    cluster.run('up', '3');
    const leader = await cluster.agreedMetadataLeader([1, 2, 3], 10_000);
    await cluster.created(leader, '/event-types', businessEventType('old.dir'));
    await until('events accepted', 20_000, async () => {
      const r = await call(url(leader), 'POST', '/event-types/old.dir/events', [businessEvent('first')]);
      return r.status === 200 ? true : undefined;
    });

    const w = [1, 2, 3].find((i) => i !== leader)!;
    const data = cluster.dataDir(w);
    /** Wipes node w, keeping a copy of its directory; returns the new member once it replaced the former one. */
    const wipeKeepingCopy = async (former: number): Promise<number> => {
      await kill(w);
      rmSync(`${data}.old`, { recursive: true, force: true });
      cpSync(data, `${data}.old`, { recursive: true });
      rmSync(data, { recursive: true, force: true });
      cluster.run('up', '3');
      const member = await until(`node ${w} to run a new member`, 30_000, async () => {
        const v = await view(w);
        return v !== undefined && v.metadata.member !== former ? v.metadata.member : undefined;
      });
      await until('the replacement: the new member a voter, the former one gone', 60_000, async () => {
        const ms = (await view(leader))?.metadata.members;
        return ms !== undefined && ms.length === 3 && ms.every((m) => m.suffrage === 'voter') && ms.some((m) => m.id === member) && !ms.some((m) => m.id === former) ? true : undefined;
      });
      return member;
    };
    /** Starts node w on the copy of its old directory: it must stop, saying what to do; then the new one again. */
    const oldCopyStops = async (member: number, what: string): Promise<void> => {
      await kill(w);
      renameSync(data, `${data}.new`);
      renameSync(`${data}.old`, data);
      const from = cluster.nodeLog(w).length;
      assert.throws(() => cluster.run('up', '3'), new RegExp(`node\\(s\\) ${w} exited`));
      const said = cluster.nodeLog(w).slice(from);
      const fatal = said.split('\n').find((l) => l.includes('must not run again'));
      assert.ok(fatal !== undefined, `node ${w} on ${what} says why it stops:\n${said.split('\n').slice(-15).join('\n')}`);
      t.diagnostic(`node ${w} (now member ${member}) on ${what}: ${(JSON.parse(fatal) as { reason: string }).reason}`);
      assert.match(fatal, /Move this directory aside \(or wipe it\) and start node \d with an empty data directory/);
      assert.match(fatal, /"exitCode":78/);
      assert.ok(gone(cluster.pid(w)), 'its process is gone');
      // The new directory back: the node runs its new member again, and the group commits through it.
      rmSync(data, { recursive: true, force: true });
      renameSync(`${data}.new`, data);
      cluster.run('up', '3');
      await until(`node ${w} to run member ${member} again`, 15_000, async () => ((await view(w))?.metadata.member === member ? true : undefined));
      const name = what.startsWith('its founding') ? 'after.first' : 'after.second';
      await until('a write through the node', 15_000, async () => ((await call(url(w), 'POST', '/event-types', businessEventType(name))).status === 201 ? true : undefined));
    };

    // The founder's directory (member = node id) comes back after a wipe.
    const first = await wipeKeepingCopy(w);
    await oldCopyStops(first, 'its founding directory');
    // The wiped directory's copy (a new member id) comes back after a second wipe.
    const second = await wipeKeepingCopy(first);
    await oldCopyStops(second, 'the directory of its first new member');
  } finally {
    const said = cluster.destroy();
    if (said !== undefined) t.diagnostic(said);
  }
});
