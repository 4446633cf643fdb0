/**
 * A form designer's starting point for API tests: a user with designer access (a patron),
 * a project of theirs with a parsed schema, and the project's grid off, so positions and
 * sizes are stored as sent.
 */
import type { TestApp } from "./app.ts";
import { buildProject, buildUserWithToken, makePatron } from "./factories.ts";
import { client } from "./http.ts";
import { buildSchema } from "./templateFactories.ts";

export async function designerWorld(app: TestApp) {
  const designer = await buildUserWithToken(app.pool);
  await makePatron(app.pool, designer.user.id);
  const api = client(app.url, designer.token);
  const projectId = await buildProject(app.pool, designer.user.id);
  const schemaId = await buildSchema(app.pool, projectId, designer.user.id);
  const gridOff = await api.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: false });
  if (gridOff.status !== 200) throw new Error(`turning the grid off: ${gridOff.status} ${gridOff.text}`);
  return { designer, api, projectId, schemaId };
}
