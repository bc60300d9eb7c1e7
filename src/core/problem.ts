/**
 * The one error type that crosses the HTTP edge, and the catalog of every Problem Brook answers.
 * Wire format (compatibility.md): {"type":"http://httpstatus.es/<status>","title":"<reason>",
 * "status":<status>,"detail":"..."} with Content-Type application/problem+json.
 *
 * Every Problem is created through `problems.<name>(detail)` so that the set of statuses Brook can answer
 * is visible in one place; problem.test.ts checks the catalog.
 */

const reasonPhrases: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function reasonPhrase(status: number): string {
  return reasonPhrases[status] ?? 'Error';
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
}

export class Problem extends Error {
  override name = 'Problem';
  readonly status: number;
  readonly title: string;
  readonly type: string;
  readonly detail: string | undefined;
  /** Stable catalog name, for logs and metrics; never sent to clients. */
  readonly code: ProblemCode;

  constructor(code: ProblemCode, status: number, detail?: string) {
    super(detail ?? reasonPhrase(status));
    this.code = code;
    this.status = status;
    this.title = reasonPhrase(status);
    this.type = `http://httpstatus.es/${status}`;
    this.detail = detail;
  }

  toJSON(): ProblemBody {
    const body: ProblemBody = { type: this.type, title: this.title, status: this.status };
    if (this.detail !== undefined) body.detail = this.detail;
    return body;
  }
}

/** The catalog: stable name -> HTTP status. Names only ever get added. */
export const problemStatus = {
  badRequest: 400,
  malformedJson: 400,
  missingHeader: 400,
  invalidCursorsHeader: 400,
  unknownFeature: 400,
  storageInUse: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  eventTypeNotFound: 404,
  subscriptionNotFound: 404,
  notAcceptable: 406,
  requestTimeout: 408,
  conflict: 409,
  eventTypeExists: 409,
  eventTypeHasSubscriptions: 409,
  payloadTooLarge: 413,
  uriTooLong: 414,
  unsupportedMediaType: 415,
  unprocessable: 422,
  invalidCursor: 422,
  invalidStreamParameters: 422,
  tooManyConnections: 429,
  headersTooLarge: 431,
  internal: 500,
  unavailable: 503,
  timeout: 504,
} as const;

export type ProblemCode = keyof typeof problemStatus;

export const problems = Object.fromEntries(
  Object.entries(problemStatus).map(([code, status]) => [
    code,
    (detail?: string) => new Problem(code as ProblemCode, status, detail),
  ]),
) as { readonly [K in ProblemCode]: (detail?: string) => Problem };

export function isProblem(err: unknown): err is Problem {
  return err instanceof Problem;
}
