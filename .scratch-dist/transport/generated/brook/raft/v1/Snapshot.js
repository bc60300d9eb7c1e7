// Original file: proto/raft.proto
export {};
//# sourceMappingURL=Snapshot.js.map