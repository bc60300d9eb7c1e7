/**
 * The flow id of the request being served, carried through asynchronous calls (AsyncLocalStorage),
 * so that code far from the HTTP layer (a metadata proposal forwarded to the Raft leader) can pass
 * the client's X-Flow-Id on without every signature in between naming it.
 *
 * Only while a flow is open. An AsyncLocalStorage that has run once turns on Node's async hooks for
 * the whole process: every promise and every async resource created after that pays an init hook and
 * the copying of the store, whatever request it belongs to (about 3 % of the main thread's samples of
 * a publishing node, docs/benchmarks.md, "Three nodes, 2026-11-27 afternoon"). So the HTTP layer opens
 * a flow only for requests that may write metadata (not publishes, not reads), and the storage is
 * disabled again, and the hooks with it, when the last open flow ends.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<{ flowId: string }>();
let open = 0;

/** Runs `fn` (and everything it starts) with `flowId` as the current flow id, until endFlow(). */
export function runInFlow<T>(flowId: string, fn: () => T): T {
  open++;
  return storage.run({ flowId }, fn);
}

/**
 * A flow opened by runInFlow ended (its request was answered): when none is left open, the storage
 * is disabled, which turns the async hooks off again. What a flow started and is still running then
 * sees no flow id (its proposals are labelled as the node's own).
 */
export function endFlow(): void {
  if (open === 0) return;
  if (--open === 0) storage.disable();
}

export function currentFlowId(): string | undefined {
  return storage.getStore()?.flowId;
}

/** Flows open now (tests). */
export function openFlows(): number {
  return open;
}
