/**
 * The one error type deployers throw. Its message is safe to store and show (credentials
 * scrubbed) and never carries the underlying error as `cause`, since SDK errors keep the
 * request with its Authorization header.
 */
import { OtherOriginError } from "../net/guardedDispatcher.ts";
import { HostLookupError, NetworkTargetError } from "../net/networkGuard.ts";
import type { Scrubber } from "./scrub.ts";

/** Stable failure codes of a deployment. */
export type DeployErrorCode =
  | "invalid_config"
  | "network_target_refused"
  | "host_not_found"
  | "unreachable"
  | "timeout"
  | "auth_failed"
  | "host_key_mismatch"
  | "permission_denied"
  | "not_found"
  | "remote_error"
  | "aborted"
  /** A branch that a push would have to overwrite, or that moved during a commit. */
  | "branch_conflict"
  /** The deployment's project was deleted before it ran. */
  | "project_deleted";

/** Failures a later attempt cannot fix without a change of configuration. */
const PERMANENT: ReadonlySet<DeployErrorCode> = new Set([
  "invalid_config",
  "network_target_refused",
  "auth_failed",
  "host_key_mismatch",
  "permission_denied",
  "not_found",
  "aborted",
  "branch_conflict",
  "project_deleted",
]);

/** A deployment failure with a stable code and a scrubbed, human-readable message. */
export class DeployError extends Error {
  readonly code: DeployErrorCode;
  /** Whether retrying the same deployment may succeed (network trouble, a 5xx). */
  readonly retryable: boolean;
  /** Extra facts for the log (both fingerprints of a changed host key, a status). */
  readonly details: Record<string, unknown>;

  constructor(code: DeployErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "DeployError";
    this.code = code;
    this.retryable = !PERMANENT.has(code);
    this.details = details;
  }
}

const NETWORK_CODES: Record<string, [DeployErrorCode, string]> = {
  ECONNREFUSED: ["unreachable", "connection refused"],
  ECONNRESET: ["unreachable", "connection reset"],
  EHOSTUNREACH: ["unreachable", "host unreachable"],
  ENETUNREACH: ["unreachable", "network unreachable"],
  EPIPE: ["unreachable", "connection closed"],
  ETIMEDOUT: ["timeout", "timed out"],
  ENOTFOUND: ["host_not_found", "no such host"],
  EAI_AGAIN: ["host_not_found", "DNS lookup failed"],
};

/**
 * Turns anything thrown into a DeployError with a scrubbed message; `context` names the
 * step ("FTP connection to example.com:21") for errors that do not say it themselves.
 */
export function toDeployError(error: unknown, scrubber: Scrubber, context: string): DeployError {
  if (error instanceof DeployError) return new DeployError(error.code, scrubber.text(error.message), scrubber.value(error.details));
  const inner = error instanceof Error && error.cause instanceof Error && /fetch failed/.test(error.message) ? error.cause : error;
  if (inner instanceof NetworkTargetError) return new DeployError("network_target_refused", inner.message);
  if (inner instanceof OtherOriginError) return new DeployError("network_target_refused", `${context} failed: ${inner.message}`);
  if (inner instanceof HostLookupError) return new DeployError("host_not_found", `${context} failed: ${inner.message}`);
  if (inner instanceof Error && inner.name === "AbortError") return new DeployError("aborted", `${context} was cancelled.`);
  const code = inner instanceof Error ? (inner as NodeJS.ErrnoException).code : undefined;
  const network = typeof code === "string" ? NETWORK_CODES[code] : undefined;
  if (network) return new DeployError(network[0], `${context} failed: ${network[1]}.`);
  const message = inner instanceof Error ? inner.message : String(inner);
  return new DeployError("remote_error", scrubber.text(`${context} failed: ${message}`));
}
