/**
 * The outermost error mapping (STYLE "Errors"): every failure leaves as
 * `{message, code, errors?}` with a fitting status, and no stack trace ever leaves the
 * server. Unexpected errors become a 500 "Server error" and are logged with their cause.
 * The message follows the caller's language (shared/languages/errorMessages.ts).
 */
import {
  ForeignKeyIntegrityConstraintViolationError,
  NotFoundError,
  UniqueIntegrityConstraintViolationError,
} from "slonik";
import { ZodError } from "zod";
import { databaseUnavailable } from "../../shared/db/availability.ts";
import { AppError, invalid } from "../../shared/errors.ts";
import { errorLocale, localizedErrorMessage } from "../../shared/languages/errorMessages.ts";
import { fieldErrors } from "../../shared/validation.ts";
import type { AppContext } from "../context.ts";

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  /** formidable (multipart bodies) puts its status here. */
  httpCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
  /** The byte limit a body parser refused the body by (raw-body's `entity.too.large`). */
  limit?: number;
}

const httpCodes: Record<number, [string, string]> = {
  400: ["bad_request", "The request could not be understood."],
  405: ["method_not_allowed", "The method is not allowed for this route."],
  408: ["request_timeout", "The request body took too long to arrive."],
  411: ["length_required", "The request needs a Content-Length."],
  413: ["payload_too_large", "The request body is too large."],
  415: ["unsupported_media_type", "The request body's content type is not supported here."],
  431: ["headers_too_large", "The request headers are too large."],
};

/** Seconds a client is asked to wait before retrying while the database is unreachable. */
const DATABASE_RETRY_AFTER_S = "5";

/** Maps database constraint violations to a 422 on the offending field. */
function constraintError(error: UniqueIntegrityConstraintViolationError | ForeignKeyIntegrityConstraintViolationError): AppError {
  const detail = error.detail ?? "";
  const column = /Key \((?:lower\()?"?([a-z_]+)"?(?:::\w+)?\)?(?:, [^)]*)?\)=/.exec(detail)?.[1] ?? error.column ?? "id";
  const label = column.replace(/_/g, " ");
  return error instanceof UniqueIntegrityConstraintViolationError
    ? invalid({ [column]: [`The ${label} has already been taken.`] })
    : invalid({ [column]: [`The selected ${label} is invalid.`] });
}

/** Turns any thrown value into the AppError the client will see. */
export function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) return invalid(fieldErrors(error));
  if (error instanceof NotFoundError) return new AppError(404, "not_found", "Resource not found.");
  if (error instanceof UniqueIntegrityConstraintViolationError || error instanceof ForeignKeyIntegrityConstraintViolationError) {
    return constraintError(error);
  }
  if (databaseUnavailable(error)) {
    return new AppError(503, "database_unavailable", "The database cannot be reached just now; try again shortly.", undefined, { "Retry-After": DATABASE_RETRY_AFTER_S });
  }
  const http = error as HttpLikeError;
  const status = http?.status ?? http?.statusCode ?? http?.httpCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    if (status === 400 && /parse|json|unexpected token|invalid|multipart|malformed|boundary/i.test(`${http.type ?? ""} ${http.message ?? ""}`)) {
      return new AppError(400, "malformed_body", "The request body is not valid JSON, form or multipart data.");
    }
    if (status === 413 && typeof http.limit === "number") {
      return new AppError(413, "payload_too_large", `The request body is too large: the limit is ${http.limit} bytes.`);
    }
    const [code, message] = httpCodes[status] ?? ["bad_request", "The request could not be understood."];
    return new AppError(status, code, message);
  }
  return undefined;
}

/** Answers `error` as the client will see it: mapped, or a bare 500 that is logged. */
export function respondWithError(ctx: AppContext, error: unknown): void {
  const mapped = toAppError(error);
  // The message in the caller's language (the code stays as it is: clients switch on it).
  const locale = errorLocale(ctx.state.user?.language, ctx.get("accept-language") || undefined);
  ctx.set("Content-Language", locale);
  if (mapped) {
    const message = localizedErrorMessage(mapped.code, mapped.message, locale);
    ctx.status = mapped.status;
    ctx.set(mapped.headers);
    ctx.body = mapped.errors ? { message, code: mapped.code, errors: mapped.errors } : { message, code: mapped.code };
    if (mapped.status >= 500) ctx.state.log.error({ err: error }, "request failed");
    return;
  }
  ctx.state.log.error({ err: error }, "unhandled error");
  ctx.status = 500;
  ctx.body = { message: localizedErrorMessage("server_error", "Server error", locale), code: "server_error" };
}
