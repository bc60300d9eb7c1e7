// Original file: proto/raft.proto
export {};
//# sourceMappingURL=RaftTransport.js.map