/**
 * The folder tree resource (template structure, generation tree).
 */
import { z } from "zod";
import type { TreeNode } from "../../shared/generations/tree.ts";

export const treeNodeResource: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({
    name: z.string(),
    path: z.string(),
    type: z.enum(["folder", "file"]),
    size: z.number().nullable(),
    children: z.array(treeNodeResource).optional(),
  }),
).meta({ id: "TreeNode" }); // named in the OpenAPI document's components
