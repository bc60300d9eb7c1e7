// Original file: proto/forward.proto
export {};
//# sourceMappingURL=ReadRequest.js.map