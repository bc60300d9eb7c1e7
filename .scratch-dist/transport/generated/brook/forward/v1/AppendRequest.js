// Original file: proto/forward.proto
export {};
//# sourceMappingURL=AppendRequest.js.map