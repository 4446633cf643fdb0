/**
 * A re-parse of a schema that removes a table or fields: form designer sets, windows and
 * placements and project reports that name them are kept and flagged on reads (`stale_fields`,
 * a placement's `missing`, a report's `table_missing`); edits that send such a reference back
 * as stored, or leave it alone, succeed, while adding a reference to a missing field or table
 * answers 422 naming it.
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
const band = (height: number, items: object[] = []) => ({ height, items });
const fieldItem = (name: string, x: number) => ({ type: "field", field_name: name, x, y: 0, width: 100, height: 20 });
const textItem = (text: string) => ({ type: "text", text, x: 300, y: 0, width: 100, height: 20 });

t.test("form sets and reports whose fields or table a re-parse removed", async (t) => {
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

  // A set whose window places a field that will go, a field linking a table that will go, and one that stays.
  const set = (await api.post("/api/form-sets", { name: "Screens", project_id: projectId, schema_id: schemaId })).body.form_set;
  const window = (await api.post("/api/form-windows", { form_set_id: set.id, name: "Edit", window_type: "create_edit" })).body.form_window;
  const placed = await api.put(`/api/form-windows/${window.id}/layout`, {
    version: window.version,
    elements: [field("users.nickname", 10), field("users.email", 40, { link_table: "posts", link_field: "id", link_display_field: "title" }), field("email", 70)],
  });
  t.equal(placed.status, 200, placed.text);
  t.same(placed.body.form_window.stale_fields, [], "nothing stale before the re-parse");
  t.same(placed.body.form_window.elements.map((e: { missing: boolean }) => e.missing), [false, false, false]);
  const [nickname, linked] = placed.body.form_window.elements as { id: number }[];

  // Reports on a table that stays (one of its fields goes) and on a table that goes.
  const usersReport = (await api.post(`${base}/reports`, { name: "Users", schema_id: schemaId, table_name: "users" })).body.report;
  const postsReport = (await api.post(`${base}/reports`, { name: "Posts", schema_id: schemaId, table_name: "posts" })).body.report;
  const usersLayout = { page_width: 800, bands: { header: band(40, [textItem("Users")]), detail: band(24, [fieldItem("email", 0), fieldItem("nickname", 120)]), footer: band(20) } };
  const postsLayout = { page_width: 800, bands: { header: band(40), detail: band(24, [fieldItem("title", 0)]), footer: band(20) } };
  t.equal((await api.put(`${base}/reports/${usersReport.id}/layout`, usersLayout)).status, 200);
  t.equal((await api.put(`${base}/reports/${usersReport.id}/pattern`, { group_by: ["nickname"], sort_by: [{ field_name: "email", direction: "asc" }] })).status, 200);
  t.equal((await api.put(`${base}/reports/${postsReport.id}/layout`, postsLayout)).status, 200);
  t.equal((await api.put(`${base}/reports/${postsReport.id}/pattern`, { group_by: [], sort_by: [{ field_name: "user_id", direction: "desc" }] })).status, 200);
  t.match((await api.get(`${base}/reports/${usersReport.id}`)).body.report, { table_missing: false, stale_fields: [] }, "no report flagged before");

  const reparsed = await api.put(`${base}/schemas/${schemaId}`, { sql_text: after });
  t.equal(reparsed.status, 200, reparsed.text);

  await t.test("the set, its window and its placements are flagged", async (t) => {
    const shown = (await api.get(`/api/form-sets/${set.id}`)).body.form_set;
    t.same(shown.stale_fields, ["users.nickname", "posts"]);
    t.same(shown.windows[0].stale_fields, ["users.nickname", "posts"]);
    t.same(shown.windows[0].elements.map((e: { missing: boolean }) => e.missing), [true, true, false]);
    const win = (await api.get(`/api/form-windows/${window.id}`)).body.form_window;
    t.same(win.stale_fields, ["users.nickname", "posts"]);
    t.match((await api.get(`/api/form-elements/${nickname!.id}`)).body.form_element, { field_name: "users.nickname", missing: true });
    t.match((await api.get(`/api/form-elements/${linked!.id}`)).body.form_element, { link_table: "posts", missing: true });
  });

  await t.test("editing the set and its placements works around the stale references; adding one is 422", async (t) => {
    const renamed = await api.put(`/api/form-sets/${set.id}`, { name: "Old screens" });
    t.equal(renamed.status, 200, renamed.text);
    t.same(renamed.body.form_set.stale_fields, ["users.nickname", "posts"], "the answer flags too");
    const moved = await api.put(`/api/form-elements/${nickname!.id}`, { x_position: 20 });
    t.equal(moved.status, 200, moved.text);
    t.match(moved.body.form_element, { x_position: 20, missing: true });
    const { version } = (await api.get(`/api/form-windows/${window.id}`)).body.form_window;
    const stale = { link_table: "posts", link_field: "id", link_display_field: "title" };
    const kept = await api.put(`/api/form-windows/${window.id}/layout`, {
      version,
      elements: [{ id: nickname!.id, ...field("users.nickname", 10), x_position: 30 }, { id: linked!.id, ...field("users.email", 40, stale) }],
    });
    t.equal(kept.status, 200, kept.text);
    t.same(kept.body.form_window.stale_fields, ["users.nickname", "posts"]);
    t.same(kept.body.form_window.elements.map((e: { missing: boolean }) => e.missing), [true, true]);
    const added = await api.post("/api/form-elements", { form_window_id: window.id, ...field("users.nickname", 100) });
    t.equal(added.status, 422, added.text);
    t.match(added.body.errors, { field_name: [/users\.nickname is not a field of the project's schema/] });
    const addedLink = await api.post("/api/form-elements", { form_window_id: window.id, ...field("users.email", 100, stale) });
    t.equal(addedLink.status, 422, addedLink.text);
    t.match(addedLink.body.errors, { link_table: [/posts is not a table/] });
  });

  await t.test("reports are flagged: the missing table, and the fields their layout and pattern name", async (t) => {
    const listed = (await api.get(`${base}/reports`)).body.data;
    t.match(listed, [
      { id: usersReport.id, table_missing: false, stale_fields: ["nickname"] },
      { id: postsReport.id, table_missing: true, stale_fields: ["title", "user_id"] },
    ]);
    t.match((await api.get(`${base}/reports/${postsReport.id}`)).body.report, { table_missing: true, stale_fields: ["title", "user_id"] });
    t.same((await api.get(`${base}/reports/${usersReport.id}/layout`)).body, { layout: usersLayout, stale_fields: ["nickname"] });
    t.same((await api.get(`${base}/reports/${usersReport.id}/pattern`)).body.stale_fields, ["nickname"]);
    t.same((await api.get(`${base}/reports/${postsReport.id}/pattern`)).body.stale_fields, ["user_id"]);
  });

  await t.test("report edits keep stored stale fields; a new one is 422 naming it", async (t) => {
    const renamed = await api.put(`${base}/reports/${postsReport.id}`, { name: "Old posts" });
    t.equal(renamed.status, 200, renamed.text);
    t.match(renamed.body.report, { name: "Old posts", table_missing: true });
    const retitled = { ...usersLayout, bands: { ...usersLayout.bands, header: band(40, [textItem("All users")]) } };
    const saved = await api.put(`${base}/reports/${usersReport.id}/layout`, retitled);
    t.equal(saved.status, 200, `a layout sending a removed field back as stored is saved: ${saved.text}`);
    const postsSaved = await api.put(`${base}/reports/${postsReport.id}/layout`, { ...postsLayout, bands: { ...postsLayout.bands, header: band(40, [textItem("Posts")]) } });
    t.equal(postsSaved.status, 200, `a report whose table is gone saves its layout: ${postsSaved.text}`);
    const regrouped = await api.put(`${base}/reports/${usersReport.id}/pattern`, { group_by: ["nickname"], sort_by: [{ field_name: "nickname", direction: "desc" }] });
    t.equal(regrouped.status, 200, `a stored field moves within the report: ${regrouped.text}`);

    const newField = await api.put(`${base}/reports/${usersReport.id}/layout`, { ...retitled, bands: { ...retitled.bands, footer: band(20, [fieldItem("title", 0)]) } });
    t.equal(newField.status, 422, newField.text);
    t.match(newField.body, { code: "validation_failed", errors: { "bands.footer.items.0.field_name": [/The field title is not a field of the report's table users/] } });
    const newGroup = await api.put(`${base}/reports/${postsReport.id}/pattern`, { group_by: ["id"], sort_by: [{ field_name: "user_id", direction: "desc" }] });
    t.equal(newGroup.status, 422, newGroup.text);
    t.match(newGroup.body.errors, { "group_by.0": [/The field id cannot be added: the report's table posts is no longer in its schema/] });
    t.same((await api.get(`${base}/reports/${postsReport.id}/pattern`)).body.pattern, { group_by: [], sort_by: [{ field_name: "user_id", direction: "desc" }] }, "nothing written");
  });
});
