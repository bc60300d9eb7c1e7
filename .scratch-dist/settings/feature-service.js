/**
 * Feature toggles (GET/POST /settings/features): reading applies the defaults of core/features.ts to
 * what operators set; setting one is a replicated metadata command, so every node agrees.
 */
import { featureDefaults, isFeatureName } from '../core/features.js';
import { problems } from '../core/problem.js';
export class FeatureService {
    #reader;
    #proposer;
    constructor(reader, proposer) {
        this.#reader = reader;
        this.#proposer = proposer;
    }
    isEnabled(name) {
        return this.#reader().feature(name) ?? featureDefaults[name];
    }
    list() {
        return Object.keys(featureDefaults).map((feature) => ({ feature, enabled: this.isEnabled(feature) }));
    }
    /** Validates a POST /settings/features body and sets the toggle (400 for unknown names, compatibility.md). */
    async set(body) {
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
            throw problems.badRequest('The body must be an object {"feature": <name>, "enabled": <boolean>}');
        }
        const { feature, enabled } = body;
        if (typeof feature !== 'string')
            throw problems.badRequest('Field "feature" must be a string');
        if (typeof enabled !== 'boolean')
            throw problems.badRequest('Field "enabled" must be a boolean');
        if (!isFeatureName(feature)) {
            throw problems.unknownFeature(`Unknown feature "${feature}"; known features: ${Object.keys(featureDefaults).join(', ')}`);
        }
        const r = await this.#proposer.propose({ op: 'feature.set', feature, enabled });
        if (!r.ok)
            throw problems.conflict(r.detail);
        return { feature, enabled };
    }
}
//# sourceMappingURL=feature-service.js.map