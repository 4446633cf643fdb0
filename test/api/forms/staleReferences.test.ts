/**
 * A re-parse of a schema may remove the table or fields that forms and form placements name;
 * the project keeps them. Reads flag what is gone (a form's `table_missing`, `stale_fields` and
 * each field's `missing`, also beside the layout), and an edit that leaves a stale reference
 * as it is succeeds, while one that needs it fails with a 422 naming it.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken, makePatron } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const before = `
CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL, nickname TEXT);
CREATE TABLE posts (id SERIAL PRIMARY KEY, user_id INTEGER NOT NULL, title VARCHAR(200) NOT NULL);`;
const after = "CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL);";

const field = (fieldName: string, y: number, link: Record<string, string> = {}) => ({
  element_type: "field_textinput", field_name: fieldName, control_type: "text", x_position: 10, y_position: y, ...link,
});

t.test("forms and placements whose table or fields a re-parse removed", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  await makePatron(app.pool, owner.user.id);
  const api = client(app.url, owner.token);
  const projectId = await buildProject(app.pool, owner.user.id);
  const base = `/api/projects/${projectId}`;
  t.equal((await api.put(base, { form_designer_snap_to_grid: false })).status, 200);
  const schema = await api.post(`${base}/schemas`, { name: "blog", sql_text: before, database_type: "PostgreSQL" });
  t.equal(schema.status, 201, schema.text);
  const schemaId = schema.body.schema.id as number;

  const posts = (await api.post(`${base}/forms`, { name: "Posts", schema_id: schemaId, table_name: "posts" })).body.form;
  const users = (await api.post(`${base}/forms`, { name: "Users", schema_id: schemaId, table_name: "users" })).body.form;
  for (const field_name of ["title", "user_id"]) t.equal((await api.post(`${base}/forms/${posts.id}/fields`, { field_name })).status, 201);
  for (const field_name of ["email", "nickname"]) t.equal((await api.post(`${base}/forms/${users.id}/fields`, { field_name })).status, 201);
  const usersLayout = { width: 400, height: 300, items: [{ field_name: "email", x: 0, y: 0, width: 200, height: 24 }, { field_name: "nickname", x: 0, y: 30, width: 200, height: 24 }] };
  t.equal((await api.put(`${base}/forms/${users.id}/layout`, usersLayout)).status, 200);
  const fresh = (await api.get(`${base}/forms/${users.id}`)).body.form;
  t.match(fresh, { table_missing: false, stale_fields: [], fields: [{ field_name: "email", missing: false }, { field_name: "nickname", missing: false }] }, "nothing is flagged before");

  const set = await api.post("/api/form-sets", { name: "Screens", project_id: projectId });
  t.equal(set.status, 201, set.text);
  const window = (await api.post("/api/form-windows", { form_set_id: set.body.form_set.id, name: "Edit", window_type: "create_edit" })).body.form_window;
  const placed = await api.put(`/api/form-windows/${window.id}/layout`, {
    version: window.version,
    elements: [field("users.nickname", 10), field("users.email", 40, { link_table: "posts", link_field: "id", link_display_field: "title" })],
  });
  t.equal(placed.status, 200, placed.text);
  const [nickname, linked] = placed.body.form_window.elements as { id: number }[];

  const reparsed = await api.put(`${base}/schemas/${schemaId}`, { sql_text: after });
  t.equal(reparsed.status, 200, reparsed.text);

  t.test("reads flag the missing table and fields", async (t) => {
    const listed = (await api.get(`${base}/forms`)).body.data;
    t.match(listed, [
      { id: posts.id, table_missing: true, stale_fields: ["title", "user_id"], fields: [{ field_name: "title", missing: true }, { field_name: "user_id", missing: true }] },
      { id: users.id, table_missing: false, stale_fields: ["nickname"], fields: [{ field_name: "email", missing: false }, { field_name: "nickname", missing: true }] },
    ]);
    t.match((await api.get(`${base}/forms/${users.id}`)).body.form, { table_missing: false, stale_fields: ["nickname"] });
    t.same((await api.get(`${base}/forms/${users.id}/layout`)).body, { layout: usersLayout, stale_fields: ["nickname"] }, "the layout names the stale fields it may place");
  });

  t.test("edits that leave the stale reference succeed; those needing it fail naming it", async (t) => {
    t.equal((await api.put(`${base}/forms/${posts.id}`, { name: "Old posts" })).status, 200, "a form whose table is gone is renamed");
    t.equal((await api.put(`${base}/forms/${users.id}/layout`, { ...usersLayout, width: 500 })).status, 200, "a layout placing a stale field is saved");
    const added = await api.post(`${base}/forms/${posts.id}/fields`, { field_name: "title" });
    t.equal(added.status, 422, added.text);
    t.match(added.body.errors, { table_name: [/posts is no longer in its schema/] }, "adding a field to a form whose table is gone names the table");
    const gone = await api.post(`${base}/forms/${users.id}/fields`, { field_name: "nickname" });
    t.match(gone.body.errors, { field_name: [/nickname is not a field of users/] });
    const staleField = (await api.get(`${base}/forms/${users.id}`)).body.form.fields.find((f: { field_name: string }) => f.field_name === "nickname");
    const removed = await api.delete(`${base}/forms/${users.id}/fields/${staleField.id}`);
    t.match(removed.body.form, { stale_fields: [], fields: [{ field_name: "email" }] }, "a stale field is removed");

    const moved = await api.put(`/api/form-elements/${nickname!.id}`, { x_position: 20 });
    t.equal(moved.status, 200, `a placement of a removed field is moved: ${moved.text}`);
    t.match(moved.body.form_element, { field_name: "users.nickname", x_position: 20 });
    const movedLinked = await api.put(`/api/form-elements/${linked!.id}`, { y_position: 80 });
    t.equal(movedLinked.status, 200, `a placement linking a removed table is moved: ${movedLinked.text}`);
    const relinked = await api.put(`/api/form-elements/${linked!.id}`, { link_field: "user_id" });
    t.equal(relinked.status, 422, relinked.text);
    t.match(relinked.body.errors, { link_table: [/posts is no longer in the project's schema/] }, "a new linked field names the missing table");
    const renamed = await api.put(`/api/form-elements/${nickname!.id}`, { field_name: "users.nickname2" });
    t.match(renamed.body.errors, { field_name: [/users.nickname2 is not a field/] }, "a new field name is still checked");
    t.equal((await api.put(`/api/form-elements/${nickname!.id}`, { field_name: "users.email" })).status, 200, "and one that exists is taken");

    const layout = async (elements: object[]) => {
      const { version } = (await api.get(`/api/form-windows/${window.id}`)).body.form_window;
      return api.put(`/api/form-windows/${window.id}/layout`, { version, elements });
    };
    const stale = { link_table: "posts", link_field: "id", link_display_field: "title" };
    const kept = await layout([{ id: nickname!.id, ...field("users.email", 10) }, { id: linked!.id, ...field("users.email", 80, stale), x_position: 30 }]);
    t.equal(kept.status, 200, `a layout sending a stale placement back as stored is saved: ${kept.text}`);
    t.match(kept.body.form_window.elements, [{ id: nickname!.id }, { id: linked!.id, x_position: 30, link_table: "posts" }]);
    const changed = await layout([{ id: nickname!.id, ...field("users.email", 10) }, { id: linked!.id, ...field("users.email", 80, { ...stale, link_field: "user_id" }) }]);
    t.equal(changed.status, 422, changed.text);
    t.match(changed.body.errors, { "elements.1.link_table": [/posts is no longer in the project's schema/] }, "changing what links to the missing table names it");
    const placedAnew = await layout([{ id: linked!.id, ...field("users.email", 80, stale) }, field("users.nickname", 120)]);
    t.match(placedAnew.body.errors, { "elements.1.field_name": [/users.nickname is not a field/] }, "a new placement of a removed field is refused");
  });
});
