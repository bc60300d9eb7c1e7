// Original file: proto/raft.proto
export {};
//# sourceMappingURL=MessageBatch.js.map