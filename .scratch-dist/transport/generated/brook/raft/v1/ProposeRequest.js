// Original file: proto/raft.proto
export {};
//# sourceMappingURL=ProposeRequest.js.map