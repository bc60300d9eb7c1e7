// Original file: proto/raft.proto
export {};
//# sourceMappingURL=StreamSummary.js.map