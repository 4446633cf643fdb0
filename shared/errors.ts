/**
 * The one error type of the service. Anything thrown as an AppError reaches the client as
 * `{message, code, errors?}` with its status; everything else becomes a logged 500.
 *
 * Codes are stable snake_case strings (DESIGN §7) that clients may switch on.
 */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: FieldErrors | undefined;
  /** Extra response headers (Retry-After, WWW-Authenticate, …). */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, errors?: FieldErrors, headers: Record<string, string> = {}) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.errors = errors;
    this.headers = headers;
  }
}

/** 404: the resource does not exist, or the caller may not know that it does. */
export const notFound = (what = "Resource") => new AppError(404, "not_found", `${what} not found.`);

/** 403: the caller can see the resource but may not do this to it. */
export const forbidden = (message = "This action is unauthorized.") => new AppError(403, "forbidden", message);

/** 401: no valid credentials. */
export const unauthorized = (message = "Unauthenticated.") =>
  new AppError(401, "unauthenticated", message, undefined, { "WWW-Authenticate": 'Bearer realm="api"' });

/** 409: the request conflicts with the current state. */
export const conflict = (message: string, code = "conflict") => new AppError(409, code, message);

/** 422 with a field map; the message summarises the first problem as Laravel-style clients expect. */
export function invalid(errors: FieldErrors): AppError {
  const messages = Object.values(errors).flat();
  const first = messages[0] ?? "The given data was invalid.";
  const more = messages.length - 1;
  const message = more > 0 ? `${first} (and ${more} more error${more === 1 ? "" : "s"})` : first;
  return new AppError(422, "validation_failed", message, errors);
}

/** Shorthand for a 422 on one field. */
export const invalidField = (field: string, message: string) => invalid({ [field]: [message] });
