/**
 * The single place where errors become HTTP answers: Problems keep their status, fastify's own errors
 * (body too large, bad media type, ...) are mapped to Problems, anything else is a logged 500 whose
 * detail names the flow id, never a stack trace.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isProblem, Problem, problems, type ProblemBody } from '../core/problem.js';

export const problemContentType = 'application/problem+json';

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type(problemContentType).send(JSON.stringify(problem.toJSON()));
}

/** Maps any thrown value to a Problem; unknown errors become 500 and are logged by the caller. */
export function toProblem(err: unknown): { problem: Problem; unexpected: boolean } {
  if (isProblem(err)) return { problem: err, unexpected: false };
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { problem: problems.payloadTooLarge('Request body is too large'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { problem: problems.unsupportedMediaType(fe.message), unexpected: false };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { problem: problems.malformedJson(fe.message), unexpected: false };
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Client errors raised by fastify or Node's parser (malformed URL, header overflow ...).
    return { problem: new Problem('badRequest', status, fe.message ?? 'Bad request'), unexpected: false };
  }
  return { problem: problems.internal('An internal error occurred'), unexpected: true };
}

export function errorHandler(this: unknown, err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { problem, unexpected } = toProblem(err);
  if (unexpected) {
    request.log.error({ err }, 'unexpected error');
    sendProblem(reply, problems.internal(`An internal error occurred (flow id ${request.id})`));
    return;
  }
  if (problem.status >= 500) request.log.warn({ problem: problem.toJSON() }, 'request failed');
  sendProblem(reply, problem);
}

export function problemBody(p: Problem): ProblemBody {
  return p.toJSON();
}
