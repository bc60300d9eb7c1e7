export {};
//# sourceMappingURL=raft.js.map