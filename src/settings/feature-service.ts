/**
 * Feature toggles (GET/POST /settings/features): reading applies the defaults of core/features.ts to
 * what operators set; setting one is a replicated metadata command, so every node agrees.
 */
import { featureDefaults, isFeatureName, type FeatureName } from '../core/features.js';
import { problems } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';

export interface FeatureReader {
  feature(name: string): boolean | undefined;
}

export interface FeatureProposer {
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
}

export interface Feature {
  feature: string;
  enabled: boolean;
}

export class FeatureService {
  readonly #reader: () => FeatureReader;
  readonly #proposer: FeatureProposer;

  constructor(reader: () => FeatureReader, proposer: FeatureProposer) {
    this.#reader = reader;
    this.#proposer = proposer;
  }

  isEnabled(name: FeatureName): boolean {
    return this.#reader().feature(name) ?? featureDefaults[name];
  }

  list(): Feature[] {
    return (Object.keys(featureDefaults) as FeatureName[]).map((feature) => ({ feature, enabled: this.isEnabled(feature) }));
  }

  /** Validates a POST /settings/features body and sets the toggle (400 for unknown names, compatibility.md). */
  async set(body: unknown): Promise<Feature> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw problems.badRequest('The body must be an object {"feature": <name>, "enabled": <boolean>}');
    }
    const { feature, enabled } = body as Record<string, unknown>;
    if (typeof feature !== 'string') throw problems.badRequest('Field "feature" must be a string');
    if (typeof enabled !== 'boolean') throw problems.badRequest('Field "enabled" must be a boolean');
    if (!isFeatureName(feature)) {
      throw problems.unknownFeature(`Unknown feature "${feature}"; known features: ${Object.keys(featureDefaults).join(', ')}`);
    }
    const r = await this.#proposer.propose({ op: 'feature.set', feature, enabled });
    if (!r.ok) throw problems.conflict(r.detail);
    return { feature, enabled };
  }
}
