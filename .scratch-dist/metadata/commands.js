export const partitionMoveSteps = ['add_learner', 'promote', 'remove', 'cancel'];
//# sourceMappingURL=commands.js.map