/**
 * Code generations (DESIGN §11): the list of a project's generations, one generation, and
 * the folder tree of its files with sizes.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { buildTree } from "../../../shared/generations/tree.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment, paginationQuery } from "../../pagination.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import { generationResource, generationRow, generationSelect, presentGeneration } from "../../presenters/generation.ts";
import { treeNodeResource } from "../../presenters/tree.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { generationForRead } from "./load.ts";

const tags = ["Code generations"];

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/code-generations",
  summary: "The code generations of a project, newest first",
  tags,
  auth: "bearer",
  params: projectParams,
  query: paginationQuery,
  responses: { 200: { description: "A page of generations", schema: paginatedSchema(generationResource) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const [rows, total] = await Promise.all([
      pool.any(sql.type(generationRow)`${generationSelect} where g.project_id = ${project.id} order by g.id desc ${pageFragment(query)}`),
      pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from code_generations where project_id = ${project.id}`),
    ]);
    ctx.body = paginated(rows.map(presentGeneration), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/code-generations/{id}",
  summary: "One code generation",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The generation", schema: z.object({ code_generation: generationResource }) } },
  handler: async (ctx, { params }) => {
    const { generation } = await generationForRead(ctx.deps.pool, params.id, currentUser(ctx));
    ctx.body = { code_generation: presentGeneration(generation) };
  },
});

const fileRow = z.object({ path: z.string(), size: z.number() });

const tree = defineRoute({
  method: "get",
  path: "/code-generations/{id}/tree",
  summary: "The files of a code generation as a folder tree with sizes",
  tags,
  auth: "bearer",
  params: idParams,
  responses: {
    200: {
      description: "The tree",
      schema: z.object({ tree: z.array(treeNodeResource), file_count: z.number(), total_bytes: z.number() }),
    },
  },
  handler: async (ctx, { params }) => {
    const { generation } = await generationForRead(ctx.deps.pool, params.id, currentUser(ctx));
    const files = await ctx.deps.pool.any(sql.type(fileRow)`
      select path, size from code_generation_files where code_generation_id = ${generation.id} order by path`);
    ctx.body = { tree: buildTree(files), file_count: generation.file_count, total_bytes: generation.total_bytes };
  },
});

export const generationRoutes = [list, show, tree];
