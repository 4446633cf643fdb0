/**
 * The transport security of a stored FTP config on update (`secure`, not in the spec: FTPS
 * explicit `true` or `"implicit"`). Two rules keep a stored password from going out in the
 * clear without its owner asking for it:
 *
 * - an update whose `ftp_config` leaves `secure` out keeps the stored setting (the spec's
 *   fields have no `secure`, so a client that only knows them must not downgrade the
 *   connection by editing, say, `remote_path`);
 * - an update that turns FTPS off (`secure: false`) while a password is stored must send the
 *   `password` again (or `""` to drop it): the stored one was entered for an encrypted
 *   connection, and plain FTP sends it as it is (`PASS …`).
 */
import type { FieldErrors } from "../errors.ts";
import type { StoredConfig } from "./targetConfigs.ts";

/** Whether a `secure` value asks for TLS. */
const encrypted = (secure: unknown) => secure === true || secure === "implicit";

/**
 * Applies the rules to `merged` (the request's FTP config with the stored secrets filled in)
 * and returns the field errors of a refused downgrade.
 */
export function keepFtpTransport(input: Record<string, unknown>, stored: StoredConfig | null, merged: Record<string, unknown>): FieldErrors {
  const before = stored?.public?.secure;
  if (before === undefined) return {};
  if (!("secure" in input)) merged.secure = before;
  if (!encrypted(before) || encrypted(merged.secure) || "password" in input || stored?.secrets.password === undefined) return {};
  return {
    "ftp_config.password": [
      "The password field is required when secure is turned off: the stored password was entered for an encrypted (FTPS) connection and plain FTP would send it in the clear. Send it again to accept that, or keep secure.",
    ],
  };
}
