// Original file: proto/raft.proto
export {};
//# sourceMappingURL=LogChunk.js.map