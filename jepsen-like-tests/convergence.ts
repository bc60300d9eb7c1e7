/**
 * The healed cluster must settle: every node names the same leader in the same term, and every node
 * has applied everything the leader committed. Checked by polling /cluster for a while: a follower
 * learns the commit index with the next heartbeat, so a single look could fail for no reason.
 */
import type { ClusterView, LocalCluster } from './cluster-control.js';
import { sleep } from './cluster-control.js';

export async function checkConvergence(cluster: LocalCluster, timeoutMs: number): Promise<{ failures: string[]; lines: string[] }> {
  const deadline = Date.now() + timeoutMs;
  let last: (ClusterView | undefined)[] = [];
  let why = '';
  for (;;) {
    last = await Promise.all(cluster.nodes.map((i) => cluster.view(i)));
    why = settledProblem(last);
    if (why === '') break;
    if (Date.now() > deadline) break;
    await sleep(200);
  }
  const lines = last.map((v, k) =>
    v === undefined
      ? `  node ${k + 1}: no answer`
      : `  node ${v.id}: ${v.role}, leader ${v.metadata.leader}, term ${v.metadata.term}, commit ${v.metadata.commit_index}, applied ${v.metadata.applied_index}`,
  );
  lines.unshift(`cluster: ${why === '' ? 'one leader, every node applied up to the same commit index' : `NOT SETTLED after ${timeoutMs} ms: ${why}`}`);
  return { failures: why === '' ? [] : [`cluster: ${why}`], lines };
}

function settledProblem(vs: (ClusterView | undefined)[]): string {
  if (vs.some((v) => v === undefined)) return 'a node does not answer GET /cluster';
  const views = vs as ClusterView[];
  const leader = views[0]!.metadata.leader;
  if (leader === null || views.some((v) => v.metadata.leader !== leader)) return `leaders differ: ${views.map((v) => v.metadata.leader).join(', ')}`;
  if (views.some((v) => v.metadata.term !== views[0]!.metadata.term)) return `terms differ: ${views.map((v) => v.metadata.term).join(', ')}`;
  if (views.filter((v) => v.role === 'leader').length !== 1) return `roles: ${views.map((v) => v.role).join(', ')}`;
  const commit = views.find((v) => v.id === leader)!.metadata.commit_index;
  const behind = views.filter((v) => v.metadata.commit_index !== commit || v.metadata.applied_index !== commit);
  if (behind.length > 0) return `not caught up with the leader's commit ${commit}: ${behind.map((v) => `node ${v.id} commit ${v.metadata.commit_index} applied ${v.metadata.applied_index}`).join('; ')}`;
  return '';
}
