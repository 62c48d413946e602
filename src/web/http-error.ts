// The errors routes throw on purpose. The one error handler (error-handler.ts) turns any error's statusCode
// into the response status; these carry a message written for the person or program that sent the request.

const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  502: 'bad_gateway',
  503: 'unavailable',
};

/** The one answer to every feed address that serves nothing: the body must not depend on the token. */
export const NO_SUCH_FEED = 'No feed at this address. It may have been replaced or revoked.';

export function errorCodeOf(status: number): string {
  return CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

export interface HttpErrorOptions {
  code?: string;
  /** Heading of the HTML error page; derived from the status when absent. */
  title?: string;
  headers?: Record<string, string>;
}

/** An error whose message is safe and meant to be shown, whatever its status. */
export class HttpError extends Error {
  readonly code: string;
  readonly title: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly statusCode: number,
    message: string,
    options: HttpErrorOptions = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = options.code ?? errorCodeOf(statusCode);
    this.title = options.title;
    this.headers = options.headers ?? {};
  }
}

/** A store error's message ("a team named … exists already") as a sentence for a page. */
export const asSentence = (message: string): string =>
  `${message.charAt(0).toUpperCase()}${message.slice(1)}${/[.!?]$/.test(message) ? '' : '.'}`;
