import { enrichmentStrategyNames, partitionStrategyNames } from '../../registry/index.js';
export const registryRoutes = async (app) => {
    app.get('/registry/partition-strategies', async () => partitionStrategyNames);
    app.get('/registry/enrichment-strategies', async () => enrichmentStrategyNames);
};
//# sourceMappingURL=registry.js.map