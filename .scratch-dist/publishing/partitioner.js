export class PartitioningError extends Error {
    name = 'PartitioningError';
}
/** Java's String.hashCode over UTF-16 code units, with int32 overflow. */
export function javaStringHashCode(s) {
    let h = 0;
    for (let i = 0; i < s.length; i++)
        h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
    return h;
}
/** The string form of a key value: strings as they are, anything else as its JSON text. */
export function keyString(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
}
/** Resolves a dotted path ("a.b.c") inside an event; undefined when any step is missing. */
export function readPath(event, path) {
    let cur = event;
    for (const step of path) {
        if (cur === null || typeof cur !== 'object' || Array.isArray(cur))
            return undefined;
        cur = cur[step];
    }
    return cur;
}
export function hashPartitionIndex(values, count) {
    let sum = 0;
    for (const v of values)
        sum = (sum + javaStringHashCode(keyString(v))) | 0;
    return Math.abs(sum) % count;
}
/**
 * Builds the partitioner of an event type once (paths split, ids sorted) for use over a whole batch.
 * strictKeys (feature check_partitions_keys): a hash key value must be a string, number or boolean;
 * null, objects and arrays are refused instead of being hashed through their string form.
 */
export function makePartitioner(et, partitions, random, strictKeys = false) {
    switch (et.partition_strategy) {
        case 'random': {
            if (partitions.length === 1) {
                const only = partitions[0];
                return { partitionOf: () => only };
            }
            return { partitionOf: () => partitions[random.int(partitions.length)] };
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
            return {
                partitionOf(event) {
                    const values = paths.map((path, i) => {
                        const v = readPath(event, path);
                        if (v === undefined)
                            throw new PartitioningError(`partition key field "${fields[i]}" is missing`);
                        if (strictKeys && (v === null || typeof v === 'object')) {
                            throw new PartitioningError(`partition key field "${fields[i]}" must be a string, number or boolean (feature check_partitions_keys)`);
                        }
                        return v;
                    });
                    return sorted[hashPartitionIndex(values, sorted.length)];
                },
            };
        }
    }
}
//# sourceMappingURL=partitioner.js.map