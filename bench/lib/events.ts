/**
 * The benchmark's business event: an order as a shop would publish it (~500 bytes of submitted JSON),
 * with typed properties, a nested object, an array of objects and uuid/date-time/email formats, so
 * validation costs what it costs for real schemas (measurements.md: format checks are ~20% of it).
 */
import { randomUUID } from 'node:crypto';

export const orderSchema = {
  type: 'object',
  properties: {
    order_number: { type: 'string', pattern: '^ORD-[0-9]{10}$' },
    placed_at: { type: 'string', format: 'date-time' },
    channel: { type: 'string', enum: ['web', 'app', 'store', 'phone'] },
    customer: {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        email: { type: 'string', format: 'email' },
        tier: { type: 'string', enum: ['basic', 'silver', 'gold'] },
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
      },
      required: ['id', 'tier', 'country'],
    },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string', minLength: 3, maxLength: 32 },
          quantity: { type: 'integer', minimum: 1 },
          unit_price_cents: { type: 'integer', minimum: 0 },
        },
        required: ['sku', 'quantity', 'unit_price_cents'],
      },
    },
    total_cents: { type: 'integer', minimum: 0 },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
    shipping: {
      type: 'object',
      properties: {
        method: { type: 'string' },
        address: {
          type: 'object',
          properties: { city: { type: 'string' }, postal_code: { type: 'string' }, country: { type: 'string' } },
          required: ['city', 'country'],
        },
      },
    },
    gift: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['order_number', 'customer', 'items', 'total_cents', 'currency'],
};

export function eventTypeBody(name: string, strategy: 'hash' | 'random' | 'user_defined', partitions = 8): object {
  return {
    name,
    owning_application: 'bench',
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: strategy,
    ...(strategy === 'hash' ? { partition_key_fields: ['order_number'] } : {}),
    default_statistic: { messages_per_minute: 6_000_000, message_size: 500, read_parallelism: partitions, write_parallelism: partitions },
    schema: { type: 'json_schema', schema: JSON.stringify(orderSchema) },
  };
}

const cities = ['Berlin', 'Hamburg', 'München', 'Köln', 'Leipzig', 'Dresden'];
const tiers = ['basic', 'silver', 'gold'];
const channels = ['web', 'app', 'store', 'phone'];

/** One event's JSON text; every event has its own eid, customer id and order number. */
export function orderEventText(i: number): string {
  const items = Array.from({ length: 2 }, (_, k) => ({
    sku: `SKU-${String((i * 7 + k * 13) % 100000).padStart(5, '0')}`,
    quantity: 1 + ((i + k) % 4),
    unit_price_cents: 499 + ((i * 31 + k) % 9000),
  }));
  const total = items.reduce((s, it) => s + it.quantity * it.unit_price_cents, 0);
  const ms = 1_795_860_000_000 + i * 37;
  const event = {
    metadata: { eid: randomUUID(), occurred_at: new Date(ms).toISOString() },
    order_number: `ORD-${String(i).padStart(10, '0')}`,
    channel: channels[i % channels.length],
    customer: { id: randomUUID(), email: `customer${i % 100000}@example.com`, tier: tiers[i % 3], country: 'DE' },
    items,
    total_cents: total,
    currency: 'EUR',
    shipping: { method: i % 5 === 0 ? 'express' : 'standard', address: { city: cities[i % cities.length], country: 'DE' } },
    tags: i % 3 === 0 ? ['promo'] : ['repeat'],
  };
  return JSON.stringify(event);
}

/** `count` distinct batch bodies of `size` events each, as the bytes sent over HTTP. */
export function batchBodies(size: number, count: number, seed: number): Buffer[] {
  return Array.from({ length: count }, (_, b) => {
    const texts: string[] = new Array(size);
    for (let k = 0; k < size; k++) texts[k] = orderEventText(seed + b * size + k);
    return Buffer.from('[' + texts.join(',') + ']');
  });
}
