// Original file: proto/raft.proto
export {};
//# sourceMappingURL=FounderIdentity.js.map