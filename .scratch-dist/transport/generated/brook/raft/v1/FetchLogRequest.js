// Original file: proto/raft.proto
export {};
//# sourceMappingURL=FetchLogRequest.js.map