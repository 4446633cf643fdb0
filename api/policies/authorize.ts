import { forbidden } from "../../shared/errors.ts";

/** Throws 403 unless `allowed`. Use after the resource is known to be visible (else 404). */
export function authorize(allowed: boolean, message?: string): void {
  if (!allowed) throw forbidden(message);
}
