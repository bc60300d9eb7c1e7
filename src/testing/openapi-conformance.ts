/**
 * TEST-ONLY: checks an answer a test got from a broker against the OpenAPI document that same broker
 * serves (GET /openapi.json): the status must be documented for the operation, the media type too, and
 * the body must match its schema, with no field the document does not describe. broker-harness's
 * call() runs it on every answer, so the answers of all HTTP tests keep the document true (issue 11),
 * not only those of openapi.http.test.ts's tour.
 *
 * Paths the document does not name (the console, /docs/, unknown routes) are not checked here:
 * openapi.http.test.ts checks that every served route is in the document.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };
export type OpenApiDoc = { paths: Record<string, Record<string, Operation>>; components: object };

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * The document with every described object closed (additionalProperties: false where it lists
 * properties and says nothing of others). The document itself stays open, so that a field added later
 * does not make it lie to clients; but a field a real answer carries today and the document does not
 * describe is a gap in the document. Objects without listed properties (events) stay open.
 */
export function closed<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(closed) as T;
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)])) : closed(v);
  const props = out['properties'] as object | undefined;
  if (props !== undefined && Object.keys(props).length > 0 && !('additionalProperties' in out)) out['additionalProperties'] = false;
  return out as T;
}

export interface Compiled {
  doc: OpenApiDoc;
  /** Path templates as expressions, the most literal first ("/event-types/{name}/schemas" before "/event-types/{name}/{x}"). */
  templates: { template: string; re: RegExp }[];
  validators: Map<object, { open: ValidateFunction; closed: ValidateFunction }>;
}

/** The document prepared for violations(): path templates as expressions, validators compiled as needed. */
export function compileDocument(doc: OpenApiDoc): Compiled {
  const templates = Object.keys(doc.paths)
    .map((template) => ({
      template,
      re: new RegExp(`^${template.split('/').map((seg) => (seg.startsWith('{') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`),
      literal: template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length,
    }))
    .sort((a, b) => b.literal - a.literal);
  return { doc, templates, validators: new Map() };
}

/** Documents by broker URL (each broker serves its own; tests start many). */
const documents = new Map<string, Promise<Compiled | undefined>>();

function documentOf(base: string): Promise<Compiled | undefined> {
  let d = documents.get(base);
  if (d === undefined) {
    d = fetch(`${base}/openapi.json`, { signal: AbortSignal.timeout(60_000) })
      .then(async (r) => (r.ok ? compileDocument((await r.json()) as OpenApiDoc) : undefined))
      .catch(() => undefined);
    // A broker that was not up yet (or stopped) is asked again next time.
    void d.then((c) => {
      if (c === undefined) documents.delete(base);
    });
    documents.set(base, d);
  }
  return d;
}

/** Forgets the documents (a broker restarted on the same port may serve another version in a test of upgrades). */
export function forgetDocuments(): void {
  documents.clear();
}

export interface Answer {
  method: string;
  /** The request path with its query. */
  path: string;
  status: number;
  contentType: string | null;
  text: string;
}

/** What is wrong with the answer against a document, or [] when it conforms (or the path is not in the document). */
export function violations(c: Compiled, a: Answer): string[] {
  const path = a.path.split('?')[0]!.split('#')[0]!;
  const t = c.templates.find((x) => x.re.test(path));
  if (t === undefined) return [];
  const op = c.doc.paths[t.template]![a.method.toLowerCase()];
  if (op === undefined) return []; // another method on a documented path: 404/405, checked by the route list test
  const where = `${a.method} ${t.template} -> ${a.status}`;
  const response = op.responses[String(a.status)];
  if (response === undefined) return [`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`];
  if (response.content === undefined) return a.text === '' ? [] : [`${where}: documented without a body, got ${a.text.slice(0, 200)}`];
  const mediaType = (a.contentType ?? '').split(';')[0]!.trim();
  const media = response.content[mediaType];
  if (media === undefined) return [`${where}: media type '${mediaType}' not documented (documented: ${Object.keys(response.content).join(', ')})`];
  let v = c.validators.get(media.schema);
  if (v === undefined) {
    // The wrapper carries the components, so the document's #/components/schemas/... references resolve.
    v = { open: ajv.compile({ allOf: [media.schema], components: c.doc.components }), closed: ajv.compile({ allOf: [closed(media.schema)], components: closed(c.doc.components) }) };
    c.validators.set(media.schema, v);
  }
  const items: unknown[] = [];
  if (mediaType === 'application/x-json-stream') {
    for (const line of a.text.split('\n')) if (line.trim() !== '') items.push(JSON.parse(line));
  } else if (mediaType.includes('json')) {
    try {
      items.push(JSON.parse(a.text));
    } catch {
      return [`${where}: not JSON: ${a.text.slice(0, 200)}`];
    }
  } else items.push(a.text);
  const out: string[] = [];
  for (const item of items) {
    if (!v.open(item)) {
      out.push(`${where}: ${JSON.stringify(item).slice(0, 300)} does not match: ${ajv.errorsText(v.open.errors)}`);
      continue;
    }
    if (!v.closed(item)) {
      const extra = (v.closed.errors ?? []).filter((e) => e.keyword === 'additionalProperties').map((e) => `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`);
      out.push(`${where}: fields the document does not describe: ${extra.join(', ')}`);
    }
  }
  return out;
}

/** Checks an answer of the broker at `base` against its document; [] when it conforms or no document could be read. */
export async function check(base: string, a: Answer): Promise<string[]> {
  const c = await documentOf(base);
  return c === undefined ? [] : violations(c, a);
}
