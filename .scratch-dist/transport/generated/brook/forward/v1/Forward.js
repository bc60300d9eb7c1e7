// Original file: proto/forward.proto
export {};
//# sourceMappingURL=Forward.js.map