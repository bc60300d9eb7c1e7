// Original file: proto/raft.proto
export {};
//# sourceMappingURL=GroupHeartbeat.js.map