// Original file: proto/raft.proto
export {};
//# sourceMappingURL=IdentifyRequest.js.map