/**
 * Loading a code generation with its project's policy: visible to whoever sees the
 * project (404 otherwise); changes (deleting its archive) need the right to edit the
 * project's content.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { sql } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, notFound } from "../../../shared/errors.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { generationRow, generationSelect, type GenerationRow } from "../../presenters/generation.ts";

async function findGeneration(conn: CommonQueryMethods, id: number): Promise<GenerationRow> {
  const row = await conn.maybeOne(sql.type(generationRow)`${generationSelect} where g.id = ${id}`);
  if (!row) throw notFound("Code generation");
  return row;
}

/** A generation the caller may see. @throws 404 */
export async function generationForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<{ generation: GenerationRow; project: ProjectRow }> {
  const generation = await findGeneration(conn, id);
  try {
    return { generation, project: await projectForRead(conn, generation.project_id, user) };
  } catch {
    throw notFound("Code generation");
  }
}

/** A generation whose project's content the caller may change. @throws 404, 403, 423, 402, 409 */
export async function generationForWrite(tx: CommonQueryMethods, id: number, user: UserRow): Promise<{ generation: GenerationRow; project: ProjectRow }> {
  const generation = await findGeneration(tx, id);
  try {
    return { generation, project: await projectForWrite(tx, generation.project_id, user, "content", { allowExpired: true }) };
  } catch (error) {
    // A stranger gets the answer of a missing id, not "Project not found.", which would tell them this id exists.
    if (error instanceof AppError && error.status === 404) throw notFound("Code generation");
    throw error;
  }
}
