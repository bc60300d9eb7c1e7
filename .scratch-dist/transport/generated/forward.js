export {};
//# sourceMappingURL=forward.js.map