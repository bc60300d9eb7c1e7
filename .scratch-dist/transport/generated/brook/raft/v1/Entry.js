// Original file: proto/raft.proto
export {};
//# sourceMappingURL=Entry.js.map