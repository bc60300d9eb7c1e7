// Original file: proto/forward.proto
export {};
//# sourceMappingURL=BoundsRequest.js.map