// Original file: proto/forward.proto
export {};
//# sourceMappingURL=ReadChunk.js.map