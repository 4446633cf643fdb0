/**
 * Form designer writes follow the state of the set's project like every content write of a
 * project: locked 423, subscription expired 402, archived 409, for sets (update, delete,
 * the creator's clone), windows (create, update, delete, layout) and elements (create,
 * update, delete), and nothing is written; reads still work, a set without a project is not
 * affected, and the same writes go through once the project is back to normal.
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken, makePatron } from "../../support/factories.ts";
import { designerWorld } from "../../support/formDesigner.ts";

type State = "locked" | "expired" | "archived";

const refusals: Record<State, [number, string]> = {
  locked: [423, "project_locked"],
  expired: [402, "subscription_expired"],
  archived: [409, "project_archived"],
};

async function setState(pool: DatabasePool, projectId: number, state: State, on: boolean): Promise<void> {
  if (state === "locked") await pool.query(sql.type(z.object({}))`update projects set is_locked = ${on} where id = ${projectId}`);
  if (state === "archived") await pool.query(sql.type(z.object({}))`update projects set archived_at = ${on ? sql.fragment`now()` : null} where id = ${projectId}`);
  if (state === "expired") {
    await pool.query(sql.type(z.object({}))`
      update subscriptions set expires_at = now() + ${on ? sql.fragment`interval '-1 day'` : sql.fragment`interval '30 days'`} where project_id = ${projectId}`);
  }
}

/** Every form designer row of the user's sets, as JSON text. */
async function written(pool: DatabasePool, userId: number): Promise<string> {
  return pool.oneFirst(sql.type(z.object({ rows: z.string() }))`
    select jsonb_build_object(
      'sets', (select jsonb_agg(to_jsonb(s) order by s.id) from form_sets s where s.creator_user_id = ${userId}),
      'windows', (select jsonb_agg(to_jsonb(w) order by w.id) from form_windows w join form_sets s on s.id = w.form_set_id where s.creator_user_id = ${userId}),
      'elements', (select jsonb_agg(to_jsonb(e) order by e.id) from form_elements e join form_windows w on w.id = e.form_window_id
        join form_sets s on s.id = w.form_set_id where s.creator_user_id = ${userId})
    )::text as rows`);
}

t.test("form designer writes and the project's state", async (t) => {
  const app = await startTestApp(t);
  const { designer, api, projectId, schemaId } = await designerWorld(app);
  const { user } = designer;

  const set = (await api.post("/api/form-sets", { name: "Screens", project_id: projectId, schema_id: schemaId })).body.form_set;
  const loose = (await api.post("/api/form-sets", { name: "No project" })).body.form_set;
  const window = (await api.post("/api/form-windows", { form_set_id: set.id, name: "Edit", window_type: "create_edit" })).body.form_window;
  const looseWindow = (await api.post("/api/form-windows", { form_set_id: loose.id, name: "Edit", window_type: "create_edit" })).body.form_window;
  const element = (await api.post("/api/form-elements", {
    form_window_id: window.id, element_type: "field_textinput", field_name: "users.email", control_type: "text", x_position: 10, y_position: 10,
  })).body.form_element;
  t.ok(set?.id && window?.id && element?.id && loose?.id && looseWindow?.id, "the fixtures exist");

  const writes: Array<[string, () => Promise<{ status: number; body: { code?: string } }>]> = [
    ["PUT form set", () => api.put(`/api/form-sets/${set.id}`, { name: "Renamed" })],
    ["clone form set", () => api.post(`/api/form-sets/${set.id}/clone`)],
    ["DELETE form set", () => api.delete(`/api/form-sets/${set.id}`)],
    ["POST window", () => api.post("/api/form-windows", { form_set_id: set.id, name: "List", window_type: "data_table" })],
    ["PUT window", () => api.put(`/api/form-windows/${window.id}`, { name: "Edited" })],
    ["PUT layout", () => api.put(`/api/form-windows/${window.id}/layout`, { version: window.version + 1, elements: [] })],
    ["DELETE window", () => api.delete(`/api/form-windows/${window.id}`)],
    ["POST element", () => api.post("/api/form-elements", { form_window_id: window.id, element_type: "separator_horizontal", x_position: 0, y_position: 50 })],
    ["PUT element", () => api.put(`/api/form-elements/${element.id}`, { x_position: 40 })],
    ["DELETE element", () => api.delete(`/api/form-elements/${element.id}`)],
  ];

  for (const state of ["locked", "expired", "archived"] as const) {
    await t.test(`${state}: every write refused, nothing written, reads and project-less sets unaffected`, async (t) => {
      await setState(app.pool, projectId, state, true);
      t.teardown(() => setState(app.pool, projectId, state, false));
      const before = await written(app.pool, user.id);
      const [status, code] = refusals[state];
      for (const [name, write] of writes) {
        const res = await write();
        t.match([res.status, res.body.code], [status, code], name);
      }
      t.equal(await written(app.pool, user.id), before, "nothing was written");
      t.equal((await api.get(`/api/form-sets/${set.id}`)).status, 200, "the set is still readable");
      t.equal((await api.get(`/api/form-windows/${window.id}`)).status, 200, "the window is still readable");
      t.equal((await api.put(`/api/form-windows/${looseWindow.id}`, { name: `Loose ${state}` })).status, 200, "a set of no project is not affected");
    });
  }

  await t.test("another's set in the project: an editor's copy is refused in each state, and keeps the project once it takes changes", async (t) => {
    const colleague = await buildUserWithToken(app.pool);
    await makePatron(app.pool, colleague.user.id);
    await buildTeam(app.pool, user.id, { [colleague.user.id]: 4 });
    const theirs = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into form_sets (creator_user_id, project_id, schema_id, name, visibility, default_background_color, default_window_color,
        default_text_color, default_button_color, default_button_text_color)
      values (${colleague.user.id}, ${projectId}, ${schemaId}, 'Their screens', 'team', '#f0f0f0', '#ffffff', '#000000', '#0078d4', '#ffffff')
      returning id`);
    for (const state of ["locked", "expired", "archived"] as const) {
      await setState(app.pool, projectId, state, true);
      const before = await written(app.pool, user.id);
      const res = await api.post(`/api/form-sets/${theirs}/clone`);
      t.match([res.status, res.body.code], refusals[state], `${state}: refused as the creator's own copy is`);
      t.equal(await written(app.pool, user.id), before, `${state}: no copy was made outside the project`);
      await setState(app.pool, projectId, state, false);
    }
    const copy = await api.post(`/api/form-sets/${theirs}/clone`);
    t.equal(copy.status, 201, JSON.stringify(copy.body));
    t.equal(copy.body.form_set.project_id, projectId, "the editor's copy stays in the project");
    t.equal(copy.body.form_set.visibility, "private");
  });

  await t.test("back to normal: the writes go through", async (t) => {
    const updated = await api.put(`/api/form-windows/${window.id}`, { name: "Edited" });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    const layout = await api.put(`/api/form-windows/${window.id}/layout`, { version: updated.body.form_window.version, elements: [] });
    t.equal(layout.status, 200, JSON.stringify(layout.body));
    t.equal((await api.post(`/api/form-sets/${set.id}/clone`)).status, 201);
    t.equal((await api.delete(`/api/form-sets/${set.id}`)).status, 200);
  });
});
