// Original file: proto/raft.proto
export {};
//# sourceMappingURL=ConfState.js.map