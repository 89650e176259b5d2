import type { ProblemDetails } from './types';

const TITLES: Record<number, string> = {
  400: 'One or more validation errors occurred.',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  415: 'Unsupported Media Type',
  423: 'Locked',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const TYPES: Record<number, string> = {
  400: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
  401: 'https://tools.ietf.org/html/rfc7235#section-3.1',
  403: 'https://tools.ietf.org/html/rfc7231#section-6.5.3',
  404: 'https://tools.ietf.org/html/rfc7231#section-6.5.4',
  405: 'https://tools.ietf.org/html/rfc7231#section-6.5.5',
  409: 'https://tools.ietf.org/html/rfc7231#section-6.5.8',
  415: 'https://tools.ietf.org/html/rfc7231#section-6.5.13',
  423: 'https://tools.ietf.org/html/rfc4918#section-11.3',
  503: 'https://tools.ietf.org/html/rfc7231#section-6.6.4',
};

export function statusTitle(status: number): string {
  return TITLES[status] ?? `HTTP ${status}`;
}

/** An RFC 7807 problem details body, shaped like ASP.NET's. */
export function problem(
  status: number,
  detail?: string,
  extra: { title?: string; errors?: Record<string, string[]> } = {},
): ProblemDetails {
  const body: ProblemDetails = {
    type: TYPES[status] ?? 'about:blank',
    title: extra.title ?? statusTitle(status),
    status,
  };
  if (detail !== undefined) body.detail = detail;
  if (extra.errors) body.errors = extra.errors;
  return body;
}

/** Thrown by handlers; the dispatcher turns it into a problem-details answer. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly body: ProblemDetails;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    detail?: string,
    extra: { title?: string; errors?: Record<string, string[]>; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? statusTitle(status));
    this.status = status;
    this.body = problem(status, detail, extra);
    this.headers = extra.headers ?? {};
  }
}

/** 400 with an `errors` map naming the offending fields. */
export function validationProblem(errors: Record<string, string[]>, detail?: string): HttpProblem {
  const first = Object.entries(errors)[0];
  return new HttpProblem(400, detail ?? (first ? `${first[0]}: ${first[1].join(' ')}` : undefined), { errors });
}

export function badRequest(field: string, message: string): HttpProblem {
  return validationProblem({ [field]: [message] });
}

export function notFound(detail: string): HttpProblem {
  return new HttpProblem(404, detail);
}

export function unauthorized(detail = 'A valid bearer token is required.'): HttpProblem {
  return new HttpProblem(401, detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

export function htmlErrorPage(status: number): string {
  const title = `${status} ${statusTitle(status)}`;
  return `<!DOCTYPE html>\n<html><head><title>${title}</title></head><body><h1>${title}</h1><p>The service is temporarily unavailable.</p><hr><p>Microsoft-IIS/10.0</p></body></html>\n`;
}
