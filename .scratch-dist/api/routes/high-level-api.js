import { problems } from '../../core/problem.js';
export function requireHighLevelApi(app, deps) {
    app.addHook('preHandler', async () => {
        if (!deps.features.isEnabled('high_level_api')) {
            throw problems.unavailable('The subscription API is disabled by the feature toggle high_level_api');
        }
    });
}
//# sourceMappingURL=high-level-api.js.map