/**
 * Report images in storage: the key each one is kept under and its row. The bytes are the
 * re-encoded image shared/media/images.ts accepted (an upload or a project bundle), never
 * what was sent.
 */
import { randomBytes } from "node:crypto";
import type { CommonQueryMethods } from "../db/pool.ts";
import { sql } from "../db/pool.ts";
import type { CheckedImage } from "../media/images.ts";
import { reportImageRow, type ReportImageRow } from "./projectStore.ts";

/** Images a report may hold. */
export const MAX_IMAGES_PER_REPORT = 50;

/** A fresh storage key for an image of report `reportId` (deleting the report removes everything under its folder). */
export const reportImageKey = (reportId: number, extension: string) => `media/reports/${reportId}/${randomBytes(12).toString("hex")}.${extension}`;

/** Records an image stored under `key` for report `reportId`. */
export async function insertReportImage(tx: CommonQueryMethods, reportId: number, key: string, image: CheckedImage): Promise<ReportImageRow> {
  return tx.one(sql.type(reportImageRow)`
    insert into project_report_images (report_id, storage_key, content_type, byte_size, width, height, sha256)
    values (${reportId}, ${key}, ${image.contentType}, ${image.data.length}, ${image.width}, ${image.height}, ${image.sha256})
    returning id, report_id, storage_key, content_type, byte_size, width, height, sha256, created_at`);
}
