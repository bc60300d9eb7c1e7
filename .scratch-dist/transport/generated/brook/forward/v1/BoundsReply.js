// Original file: proto/forward.proto
export {};
//# sourceMappingURL=BoundsReply.js.map