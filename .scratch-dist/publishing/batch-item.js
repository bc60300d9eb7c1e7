export {};
//# sourceMappingURL=batch-item.js.map