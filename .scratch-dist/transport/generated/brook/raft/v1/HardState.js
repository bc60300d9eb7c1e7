// Original file: proto/raft.proto
export {};
//# sourceMappingURL=HardState.js.map