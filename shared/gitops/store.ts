/**
 * Recording commits and pushes as deployments of their own kind, and finding the commit a
 * generation got in a repository (what a push sends to another branch).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { GitTarget } from "./run.ts";

/** What a new commit or push records. */
export interface NewGitOperation {
  operation: "commit" | "push";
  projectId: number;
  codeGenerationId: number;
  userId: number;
  target: GitTarget;
  /** Access through the user's connection… */
  connectionId: number | null;
  /** …or through an environment (with its type). */
  environment: { id: number; type: string } | null;
}

/** Inserts a pending commit or push; returns its id. */
export async function insertGitOperation(tx: CommonQueryMethods, input: NewGitOperation): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into deployments (project_id, environment_id, code_generation_id, deployment_method, target_environment, operation, git_connection_id, git_target, user_id)
    values (${input.projectId}, ${input.environment?.id ?? null}, ${input.codeGenerationId}, 'git', ${input.environment?.type ?? null}, ${input.operation},
      ${input.connectionId}, ${sql.jsonb(input.target as never)}, ${input.userId})
    returning id`);
}

/** The commit of the latest successful commit of generation `generationId` to `provider`/`repository`, or null. */
export async function findGenerationCommit(conn: CommonQueryMethods, generationId: number, provider: string, repository: string): Promise<string | null> {
  return conn.maybeOneFirst(sql.type(z.object({ sha: z.string() }))`
    select result->>'commitSha' as sha from deployments
    where code_generation_id = ${generationId} and operation = 'commit' and status = 'succeeded'
      and git_target->>'provider' = ${provider} and git_target->>'repository' = ${repository} and result->>'commitSha' is not null
    order by id desc limit 1`);
}
