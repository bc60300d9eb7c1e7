// Original file: proto/raft.proto
export {};
//# sourceMappingURL=SnapshotMetadata.js.map