/**
 * The one error type that crosses the HTTP edge, and the catalog of every Problem Brook answers.
 * Wire format (compatibility.md): {"type":"http://httpstatus.es/<status>","title":"<reason>",
 * "status":<status>,"detail":"..."} with Content-Type application/problem+json.
 *
 * Every Problem is created through `problems.<name>(detail)` so that the set of statuses Brook can answer
 * is visible in one place; problem.test.ts checks the catalog.
 */
const reasonPhrases = {
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
export function reasonPhrase(status) {
    return reasonPhrases[status] ?? 'Error';
}
export class Problem extends Error {
    name = 'Problem';
    status;
    title;
    type;
    detail;
    /** Stable catalog name, for logs and metrics; never sent to clients. */
    code;
    constructor(code, status, detail) {
        super(detail ?? reasonPhrase(status));
        this.code = code;
        this.status = status;
        this.title = reasonPhrase(status);
        this.type = `http://httpstatus.es/${status}`;
        this.detail = detail;
    }
    toJSON() {
        const body = { type: this.type, title: this.title, status: this.status };
        if (this.detail !== undefined)
            body.detail = this.detail;
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
};
export const problems = Object.fromEntries(Object.entries(problemStatus).map(([code, status]) => [
    code,
    (detail) => new Problem(code, status, detail),
]));
export function isProblem(err) {
    return err instanceof Problem;
}
//# sourceMappingURL=problem.js.map