/** TEST-ONLY: a minimal stored event type for state machine and runtime tests. */
import type { EventType } from '../metadata/types.js';

export function storedEventType(name: string, over: Partial<EventType> = {}): EventType {
  return {
    name, owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'random', compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
    options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0', ...over,
  };
}
