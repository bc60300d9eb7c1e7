/**
 * Partition selection: a pure function of the strategy, the event and the partition ids.
 *
 * hash follows the original service (compatibility.md) so that producers relying on key -> partition
 * stability keep it: sum of Java String.hashCode of each key value's string form (32-bit wrap), absolute
 * value, modulo the partition count, indexing the partition ids sorted as strings.
 */
import type { Random } from '../core/ports.js';
import type { EventType } from '../metadata/types.js';

export class PartitioningError extends Error {
  override name = 'PartitioningError';
}

/** Java's String.hashCode over UTF-16 code units, with int32 overflow. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** The string form of a key value: strings as they are, anything else as its JSON text. */
export function keyString(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Resolves a dotted path ("a.b.c") inside an event; undefined when any step is missing. */
export function readPath(event: unknown, path: readonly string[]): unknown {
  let cur: unknown = event;
  for (const step of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[step];
  }
  return cur;
}

export function hashPartitionIndex(values: readonly unknown[], count: number): number {
  let sum = 0;
  for (const v of values) sum = (sum + javaStringHashCode(keyString(v))) | 0;
  return Math.abs(sum) % count;
}

export interface Partitioner {
  /** Returns the partition id for the event or throws PartitioningError. */
  partitionOf(event: Record<string, unknown>): string;
}

/**
 * Builds the partitioner of an event type once (paths split, ids sorted) for use over a whole batch.
 * strictKeys (feature check_partitions_keys): a hash key value must be a string, number or boolean;
 * null, objects and arrays are refused instead of being hashed through their string form.
 */
export function makePartitioner(et: EventType, partitions: readonly string[], random: Random, strictKeys = false): Partitioner {
  switch (et.partition_strategy) {
    case 'random': {
      if (partitions.length === 1) {
        const only = partitions[0]!;
        return { partitionOf: () => only };
      }
      return { partitionOf: () => partitions[random.int(partitions.length)]! };
    }
    case 'user_defined': {
      const known = new Set(partitions);
      return {
        partitionOf(event) {
          const p = readPath(event, ['metadata', 'partition']);
          if (p === undefined || p === null) {
            throw new PartitioningError('metadata.partition is required by the user_defined partition strategy');
          }
          if (typeof p !== 'string' || !known.has(p)) {
            throw new PartitioningError(`partition ${JSON.stringify(p)} does not exist; partitions are ${partitions.join(', ')}`);
          }
          return p;
        },
      };
    }
    case 'hash': {
      const fields = et.partition_key_fields ?? [];
      const prefix = et.category === 'data' ? ['data'] : [];
      const paths = fields.map((f) => [...prefix, ...f.split('.')]);
      const sorted = [...partitions].sort();
      // Loops instead of a list of the values and a closure per event: this runs for every published
      // event. Every field is checked before any is hashed, as hashPartitionIndex over the values would.
      return {
        partitionOf(event) {
          for (let i = 0; i < paths.length; i++) {
            const v = readPath(event, paths[i]!);
            if (v === undefined) throw new PartitioningError(`partition key field "${fields[i]}" is missing`);
            if (strictKeys && (v === null || typeof v === 'object')) {
              throw new PartitioningError(`partition key field "${fields[i]}" must be a string, number or boolean (feature check_partitions_keys)`);
            }
          }
          let sum = 0;
          for (let i = 0; i < paths.length; i++) sum = (sum + javaStringHashCode(keyString(readPath(event, paths[i]!)))) | 0;
          return sorted[Math.abs(sum) % sorted.length]!;
        },
      };
    }
  }
}
