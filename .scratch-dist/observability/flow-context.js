/**
 * The flow id of the request being served, carried through asynchronous calls (AsyncLocalStorage),
 * so that code far from the HTTP layer (a metadata proposal forwarded to the Raft leader) can pass
 * the client's X-Flow-Id on without every signature in between naming it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
const storage = new AsyncLocalStorage();
/** Runs `fn` (and everything it starts) with `flowId` as the current flow id. */
export function runInFlow(flowId, fn) {
    return storage.run({ flowId }, fn);
}
export function currentFlowId() {
    return storage.getStore()?.flowId;
}
//# sourceMappingURL=flow-context.js.map