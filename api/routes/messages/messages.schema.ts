/** Request schemas of the message routes (spec "Messages", DESIGN §11). */
import { z } from "zod";
import { paginationQuery } from "../../pagination.ts";
import { wholeNumber } from "../../../shared/canonicalNumbers.ts";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const body = z.string().trim().min(1).max(20_000);

export const threadParams = z.object({ threadId: id });
export const messageParams = z.object({ messageId: id });
export const listThreadsQuery = paginationQuery;

export const createThreadBody = z.object({
  subject: z.string().trim().min(1).max(255),
  project_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  body,
});
export const postMessageBody = z.object({ body });

/** The upload form: one `file`. */
export const attachmentForm = z.object({ file: z.unknown().optional() }).loose();

export const downloadQuery = z.object({
  expires: wholeNumber({ min: 0, max: 100_000_000_000 }),
  signature: z.string().max(128),
});
