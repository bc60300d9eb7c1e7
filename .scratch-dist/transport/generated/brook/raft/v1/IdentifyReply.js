// Original file: proto/raft.proto
export {};
//# sourceMappingURL=IdentifyReply.js.map