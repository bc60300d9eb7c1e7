// Original file: proto/raft.proto
export {};
//# sourceMappingURL=ProposeReply.js.map