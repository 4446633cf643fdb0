import { z } from "zod";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const projectFormParams = z.object({ projectId: id, formId: id });
export const formFieldParams = z.object({ projectId: id, formId: id, fieldId: id });
export const projectReportParams = z.object({ projectId: id, reportId: id });
export const reportImageParams = z.object({ projectId: id, reportId: id, imageId: id });

const binding = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(5000),
  schema_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  table_name: z.string().trim().min(1).max(255),
};
export const createBoundBody = z.object(binding).partial({ description: true });
export const updateBoundBody = z
  .object(binding)
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const addFieldBody = z.object({ field_name: z.string().trim().min(1).max(255), label: z.string().trim().min(1).max(255).optional() });
