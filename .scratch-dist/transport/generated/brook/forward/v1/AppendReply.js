// Original file: proto/forward.proto
export {};
//# sourceMappingURL=AppendReply.js.map