/**
 * The flow id of the request being served, carried through asynchronous calls (AsyncLocalStorage),
 * so that code far from the HTTP layer (a metadata proposal forwarded to the Raft leader) can pass
 * the client's X-Flow-Id on without every signature in between naming it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<{ flowId: string }>();

/** Runs `fn` (and everything it starts) with `flowId` as the current flow id. */
export function runInFlow<T>(flowId: string, fn: () => T): T {
  return storage.run({ flowId }, fn);
}

export function currentFlowId(): string | undefined {
  return storage.getStore()?.flowId;
}
