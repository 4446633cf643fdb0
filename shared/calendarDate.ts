/**
 * An ISO calendar date (YYYY-MM-DD) PostgreSQL can hold. zod's ISO date accepts the year 0000,
 * which ISO 8601's calendar has and PostgreSQL's `date` does not (1 BC comes right before
 * AD 1): such a date passed validation and failed in the database, a 500.
 */
import { z } from "zod";

/** The schema of a calendar date field; `error` replaces the message for a malformed one. */
export const calendarDate = (error?: string) =>
  z.iso.date(error ? { error } : undefined).refine((text) => !text.startsWith("0000"), { error: "Dates before the year 0001 are not accepted." });
