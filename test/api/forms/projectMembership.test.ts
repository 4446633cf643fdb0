/**
 * A form set in a project is project content: its creator changes it only while they may
 * change the project's content. A creator who left the project's team (or became a viewer)
 * gets 403 on every write to the set, its windows and elements, and learns nothing about the
 * project's current schema (a placement naming a field that is not there is not told apart
 * from one that is), also when their last layout write left a remembered context behind.
 * Their copy of the set is outside the project, as anyone's without that right.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken, makePatron } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildSchema } from "../../support/templateFactories.ts";

const field = (fieldName: string, y: number) => ({ element_type: "field_textinput", field_name: fieldName, control_type: "text", x_position: 10, y_position: y });

t.test("a set's creator who may no longer change the project's content", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, owner.user.id);
  await buildSchema(app.pool, projectId, owner.user.id);
  const ownerApi = client(app.url, owner.token);
  t.equal((await ownerApi.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: false })).status, 200);

  /** A team member of the project with designer access, their set, window (written once by layout) and element. */
  const memberWithSet = async () => {
    const member = await buildUserWithToken(app.pool);
    await makePatron(app.pool, member.user.id);
    const teamId = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [projectId]);
    const api = client(app.url, member.token);
    const set = await api.post("/api/form-sets", { name: "Screens", project_id: projectId });
    t.equal(set.status, 201, set.text);
    const window = await api.post("/api/form-windows", { form_set_id: set.body.form_set.id, name: "Edit", window_type: "create_edit" });
    t.equal(window.status, 201, window.text);
    const written = await api.put(`/api/form-windows/${window.body.form_window.id}/layout`, { version: window.body.form_window.version, elements: [field("users.email", 10)] });
    t.equal(written.status, 200, written.text);
    return { member, api, teamId, set: set.body.form_set, window: written.body.form_window, element: written.body.form_window.elements[0] };
  };

  const formTables = () =>
    app.pool.one(sql.type(z.object({ sets: z.string(), windows: z.string(), elements: z.string() }))`
      select (select coalesce(string_agg(fs::text, '|' order by id), '') from form_sets fs) as sets,
        (select coalesce(string_agg(w::text, '|' order by id), '') from form_windows w) as windows,
        (select coalesce(string_agg(e::text, '|' order by id), '') from form_elements e) as elements`);

  for (const how of ["removed from the team", "made a viewer"] as const) {
    t.test(how, async (t) => {
      const { member, api, teamId, set, window, element } = await memberWithSet();
      if (how === "removed from the team") {
        await app.pool.query(sql.type(z.object({}))`delete from team_members where team_id = ${teamId} and user_id = ${member.user.id}`);
      } else {
        await app.pool.query(sql.type(z.object({}))`update team_members set role_id = 4 where team_id = ${teamId} and user_id = ${member.user.id}`);
      }
      const before = await formTables();
      const layout = (name: string) => api.put(`/api/form-windows/${window.id}/layout`, { version: window.version, elements: [field(name, 10), field(name, 40)] });
      // The first write would come from the remembered context, the second from a read.
      for (const [what, res] of [
        ["layout with an existing field", await layout("users.email")],
        ["layout with a missing field", await layout("users.no_such_field")],
        ["layout with an existing field again", await layout("users.email")],
        ["new element, existing field", await api.post("/api/form-elements", { form_window_id: window.id, ...field("users.email", 80) })],
        ["new element, missing field", await api.post("/api/form-elements", { form_window_id: window.id, ...field("users.no_such_field", 80) })],
        ["element update, missing field", await api.put(`/api/form-elements/${element.id}`, { field_name: "users.no_such_field" })],
        ["element delete", await api.delete(`/api/form-elements/${element.id}`)],
        ["window update", await api.put(`/api/form-windows/${window.id}`, { name: "Renamed" })],
        ["new window", await api.post("/api/form-windows", { form_set_id: set.id, name: "Other", window_type: "main_menu" })],
        ["set update", await api.put(`/api/form-sets/${set.id}`, { name: "Renamed" })],
      ] as const) {
        t.equal(res.status, 403, `${what}: ${res.text}`);
        t.equal(res.body.code, "forbidden", what);
        t.notMatch(res.text, /no_such_field/, `${what}: says nothing of the schema`);
      }
      t.same(await formTables(), before, "nothing written");
      const read = await api.get(`/api/form-sets/${set.id}`);
      t.equal(read.status, 200, "the creator still reads their set");
      const copy = await api.post(`/api/form-sets/${set.id}/clone`);
      t.equal(copy.status, 201, copy.text);
      t.match(copy.body.form_set, { project_id: null, schema_id: null, cloned_from_id: set.id }, "their copy is outside the project");
    });
  }

  t.test("a member's writes still go through, and the owner's", async (t) => {
    const { api, window } = await memberWithSet();
    const again = await api.put(`/api/form-windows/${window.id}/layout`, { version: window.version, elements: [field("users.email", 10), field("posts.title", 40)] });
    t.equal(again.status, 200, again.text);
    const missing = await api.put(`/api/form-windows/${window.id}/layout`, { version: again.body.form_window.version, elements: [field("users.no_such_field", 10)] });
    t.equal(missing.status, 422, "a member is told about a missing field");
  });
});
