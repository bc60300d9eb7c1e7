// Original file: proto/raft.proto
export {};
//# sourceMappingURL=Message.js.map