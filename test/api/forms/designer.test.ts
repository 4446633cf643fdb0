import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject } from "../../support/factories.ts";
import { buildSchema } from "../../support/templateFactories.ts";
import { designerWorld } from "../../support/formDesigner.ts";

/** One valid element of each kind (field placements name the blog schema: users, posts). */
const kinds: Record<string, Record<string, unknown>> = {
  container_simple: { container_orientation: "vertical", container_gap: 8 },
  container_tab: { max_fields: 10, default_control_height: 24 },
  container_grid: { container_columns: 2, container_gap: 4, max_fields: 8 },
  button_save: { button_label: "Save", button_action: "save" },
  button_nav_last: { button_label: ">|", button_action: "last", button_icon: "last" },
  separator_horizontal: {},
  separator_vertical: {},
  field_textinput: { field_name: "users.email", control_type: "text" },
  field_number: { field_name: "title", control_type: "number" },
  field_dropdown: { field_name: "posts.user_id", control_type: "dropdown", link_table: "users", link_field: "id", link_display_field: "email" },
};

t.test("form designer", async (t) => {
  const app = await startTestApp(t);
  const { designer: alice, api, projectId, schemaId } = await designerWorld(app);

  const newSet = async (extra: Record<string, unknown> = {}) => {
    const res = await api.post("/api/form-sets", { name: "Shop screens", project_id: projectId, schema_id: schemaId, ...extra });
    t.equal(res.status, 201, res.text);
    return res.body.form_set;
  };
  const newWindow = async (setId: number, extra: Record<string, unknown> = {}) => {
    const res = await api.post("/api/form-windows", { form_set_id: setId, name: "Edit", window_type: "create_edit", ...extra });
    t.equal(res.status, 201, res.text);
    return res.body.form_window;
  };
  const tabOrders = async (windowId: number) => {
    const res = await api.get(`/api/form-windows/${windowId}`);
    return res.body.form_window.elements.map((e: { id: number; tab_order: number }) => [e.id, e.tab_order]);
  };

  t.test("form sets: defaults, the spec's fields, update and validation", async (t) => {
    const set = await newSet({ description: "All screens", visibility: "team" });
    t.match(set, {
      name: "Shop screens", description: "All screens", creator_user_id: alice.user.id, visibility: "team", cloned_from_id: null, is_active: true,
      default_background_color: "#f0f0f0", default_button_color: "#0078d4", windows: [], windows_count: 0, project_id: projectId, schema_id: schemaId,
    });
    const updated = await api.put(`/api/form-sets/${set.id}`, { default_button_color: "#112233", is_active: false });
    t.equal(updated.status, 200, updated.text);
    t.match(updated.body.form_set, { default_button_color: "#112233", is_active: false });
    const bad = await api.post("/api/form-sets", { name: "", visibility: "everyone", default_text_color: "red" });
    t.equal(bad.status, 422);
    t.same(Object.keys(bad.body.errors).sort(), ["default_text_color", "name", "visibility"]);
    const foreignSchema = await api.post("/api/form-sets", { name: "x", schema_id: schemaId });
    t.equal(foreignSchema.status, 422, "a schema needs its project");
    const list = await api.get("/api/form-sets?scope=mine");
    t.ok(list.body.data.some((s: { id: number; windows_count: number }) => s.id === set.id && s.windows_count === 0));
  });

  t.test("windows: sizes by type, the minimum enforced, colours from the set", async (t) => {
    const set = await newSet({ default_window_color: "#abcdef" });
    const expected = { main_menu: [800, 600, 400, 300], create_edit: [600, 500, 300, 250], data_table: [900, 600, 500, 400] } as const;
    for (const [type, [dw, dh, mw, mh]] of Object.entries(expected)) {
      const w = await newWindow(set.id, { window_type: type });
      t.match(w, { window_type: type, default_width: dw, default_height: dh, min_width: mw, min_height: mh, window_color: "#abcdef", version: 1, elements: [] });
      const below = await api.post("/api/form-windows", { form_set_id: set.id, name: "Small", window_type: type, default_width: mw - 1 });
      t.equal(below.status, 422, `${type}: a width below ${mw}`);
      t.ok(below.body.errors.default_width);
      const belowMin = await api.post("/api/form-windows", { form_set_id: set.id, name: "Small", window_type: type, min_height: mh - 1 });
      t.equal(belowMin.status, 422, `${type}: a minimum height below ${mh}`);
      t.equal((await api.post("/api/form-windows", { form_set_id: set.id, name: "Big", window_type: type, default_width: mw })).status, 201, "the minimum itself is fine");
    }
    const w = await newWindow(set.id, { window_type: "data_table" });
    t.equal((await api.put(`/api/form-windows/${w.id}`, { window_type: "create_edit" })).body.form_window.default_width, 600, "a new type brings its defaults");
    await api.post("/api/form-elements", { form_window_id: w.id, element_type: "separator_horizontal", x_position: 350, width: 200 });
    const shrink = await api.put(`/api/form-windows/${w.id}`, { default_width: 500 });
    t.equal(shrink.status, 422, "a window does not shrink below its elements");
    // Anchors lie within the window too (an element write checks them), so a shrink below one
    // would leave the element refused by every later write of it.
    const anchored = await newWindow(set.id, { window_type: "create_edit" });
    const element = await api.post("/api/form-elements", { form_window_id: anchored.id, element_type: "separator_horizontal", width: 100, anchor_right: 550, anchor_height: 450 });
    t.equal(element.status, 201, element.text);
    const narrower = await api.put(`/api/form-windows/${anchored.id}`, { default_width: 500, default_height: 400 });
    t.equal(narrower.status, 422, "a window does not shrink below its elements' anchors");
    t.same(Object.keys(narrower.body.errors ?? {}).sort(), ["default_height", "default_width"], narrower.text);
    const moved = await api.put(`/api/form-elements/${element.body.form_element.id}`, { x_position: 10 });
    t.equal(moved.status, 200, `the element stays writable: ${moved.text}`);
  });

  t.test("every element kind accepted with its fields, refused without them", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    for (const [type, fields] of Object.entries(kinds)) {
      const res = await api.post("/api/form-elements", { form_window_id: w.id, element_type: type, x_position: 10, y_position: 10, ...fields });
      t.equal(res.status, 201, `${type}: ${res.text}`);
      t.match(res.body.form_element, { element_type: type, form_window_id: w.id, ...fields });
      for (const field of Object.keys(fields)) {
        if (field === "button_icon") continue;
        const without = { ...fields };
        delete without[field];
        const refused = await api.post("/api/form-elements", { form_window_id: w.id, element_type: type, ...without });
        t.equal(refused.status, 422, `${type} without ${field}`);
        t.ok(refused.body.errors?.[field], `${type}: the error names ${field} (${JSON.stringify(refused.body.errors)})`);
      }
    }
    const button = (await api.get(`/api/form-windows/${w.id}`)).body.form_window.elements.find((e: { element_type: string }) => e.element_type === "button_save");
    t.match(button, { button_background_color: "#0078d4", button_text_color: "#ffffff" }, "button colours from the set");
    t.notOk("field_name" in button, "a button shows no placement fields");
    t.equal((await api.post("/api/form-elements", { form_window_id: w.id, element_type: "button_fly" })).status, 422, "an unknown kind");
  });

  t.test("field placements name real fields of the project's schema", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const place = (fields: Record<string, unknown>) => api.post("/api/form-elements", { form_window_id: w.id, element_type: "field_textinput", control_type: "text", ...fields });
    t.equal((await place({ field_name: "users.email" })).status, 201);
    t.equal((await place({ field_name: "email" })).status, 201, "unqualified, when some table has it");
    const missing = await place({ field_name: "users.phone" });
    t.equal(missing.status, 422);
    t.match(missing.body.errors.field_name[0], /not a field/);
    t.equal((await place({ field_name: "orders.email" })).status, 422, "a table the schema does not have");
    const badLink = await place({ field_name: "posts.user_id", control_type: "dropdown", link_table: "accounts", link_field: "id", link_display_field: "email" });
    t.equal(badLink.status, 422);
    t.ok(badLink.body.errors.link_table);
    const badDisplay = await place({ field_name: "posts.user_id", control_type: "dropdown", link_table: "users", link_field: "id", link_display_field: "name" });
    t.ok(badDisplay.body.errors.link_display_field);
    const loose = (await api.post("/api/form-sets", { name: "No project" })).body.form_set;
    const lw = await newWindow(loose.id);
    const noProject = await api.post("/api/form-elements", { form_window_id: lw.id, element_type: "field_textinput", control_type: "text", field_name: "email" });
    t.equal(noProject.status, 422, "a set without a project has no fields to place");
  });

  t.test("a set moves only where its field placements hold", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const place = async (fields: Record<string, unknown>) => {
      const res = await api.post("/api/form-elements", { form_window_id: w.id, element_type: "field_textinput", control_type: "text", ...fields });
      t.equal(res.status, 201, res.text);
      return res.body.form_element.id as number;
    };
    const email = await place({ field_name: "users.email" });
    const author = await place({ field_name: "posts.user_id", control_type: "dropdown", link_table: "users", link_field: "id", link_display_field: "email" });
    const move = (changes: Record<string, unknown>) => api.put(`/api/form-sets/${set.id}`, changes);

    const elsewhere = await buildProject(app.pool, alice.user.id);
    await buildSchema(app.pool, elsewhere, alice.user.id, "CREATE TABLE users (id SERIAL PRIMARY KEY, name TEXT);\nCREATE TABLE posts (id SERIAL PRIMARY KEY, user_id INT);", "other");
    const refused = await move({ project_id: elsewhere });
    t.equal(refused.status, 422, refused.text);
    t.same(Object.keys(refused.body.errors), ["project_id"]);
    t.match(refused.body.errors.project_id[0], /users\.email in window Edit, users\.email \(its link\) in window Edit/);
    t.match((await api.get(`/api/form-sets/${set.id}`)).body.form_set, { project_id: projectId, schema_id: schemaId }, "the set stays where it was");
    t.equal((await api.put(`/api/form-elements/${email}`, { x_position: 30 })).status, 200, "and its placements stay writable");

    const twin = await buildProject(app.pool, alice.user.id);
    const twinSchema = await buildSchema(app.pool, twin, alice.user.id);
    const moved = await move({ project_id: twin });
    t.equal(moved.status, 200, moved.text);
    t.match(moved.body.form_set, { project_id: twin, schema_id: null });
    const narrow = await buildSchema(app.pool, twin, alice.user.id, "CREATE TABLE notes (id int);", "notes");
    const narrowed = await move({ schema_id: narrow });
    t.equal(narrowed.status, 422, narrowed.text);
    t.same(Object.keys(narrowed.body.errors), ["schema_id"]);
    t.equal((await move({ schema_id: twinSchema })).status, 200, "a schema that has the fields");
    const loose = await move({ project_id: null });
    t.equal(loose.status, 422, "a set outside a project cannot hold placements");
    t.match(loose.body.errors.project_id[0], /cannot hold field placements/);

    for (const id of [email, author]) t.equal((await api.delete(`/api/form-elements/${id}`)).status, 200);
    t.equal((await move({ project_id: null })).status, 200, "without placements it leaves the project");
  });

  t.test("elements stay inside their window; anchors; snap to grid", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id); // 600 × 500
    const sep = (fields: Record<string, unknown>) => api.post("/api/form-elements", { form_window_id: w.id, element_type: "separator_horizontal", ...fields });
    t.equal((await sep({ x_position: 400, width: 200 })).status, 201, "touching the edge");
    const out = await sep({ x_position: 401, width: 200 });
    t.equal(out.status, 422);
    t.ok(out.body.errors.x_position);
    t.ok((await sep({ y_position: 499, height: 2 })).body.errors.y_position);
    const anchored = await sep({ anchor_right: 20, anchor_width: null });
    t.match(anchored.body.form_element, { anchor_right: 20, anchor_width: null, anchor_bottom: null });
    t.equal((await sep({ anchor_bottom: 501 })).status, 422);
    t.equal((await sep({ x_position: -1 })).status, 422);

    await api.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: true, form_designer_grid_size: 10 });
    const snapped = await sep({ x_position: 23, y_position: 17, width: 104, height: 3 });
    t.match(snapped.body.form_element, { x_position: 20, y_position: 20, width: 100, height: 10 });
    const moved = await api.put(`/api/form-elements/${snapped.body.form_element.id}`, { x_position: 57 });
    t.equal(moved.body.form_element.x_position, 60);
    await api.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: false });
  });

  t.test("an element update changes only the fields it sends", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const stored = {
      element_type: "button_save", button_label: "Save", button_action: "save", x_position: 20, y_position: 40, width: 120, height: 30,
      sort_order: 3, is_visible: false, background_color: "#112233", border_width: 2, border_color: "#445566",
      anchor_right: 15, anchor_bottom: 25, anchor_width: null, anchor_height: 100,
    };
    const created = await api.post("/api/form-elements", { form_window_id: w.id, ...stored });
    t.equal(created.status, 201, created.text);
    t.match(created.body.form_element, stored);
    const moved = await api.put(`/api/form-elements/${created.body.form_element.id}`, { x_position: 30 });
    t.equal(moved.status, 200, moved.text);
    t.match(moved.body.form_element, { ...stored, x_position: 30 }, "the fields not sent keep their values");
    const relabelled = await api.put(`/api/form-elements/${created.body.form_element.id}`, { button_label: "Store" });
    t.match(relabelled.body.form_element, { ...stored, x_position: 30, button_label: "Store" });
  });

  t.test("tab order stays 1…n after inserts, moves, deletes and layout writes", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const add = async (extra: Record<string, unknown> = {}) =>
      (await api.post("/api/form-elements", { form_window_id: w.id, element_type: "separator_horizontal", ...extra })).body.form_element;
    const a = await add();
    const b = await add();
    const c = await add();
    t.same([a.tab_order, b.tab_order, c.tab_order], [1, 2, 3]);
    const d = await add({ tab_order: 1 });
    t.same(await tabOrders(w.id), [[d.id, 1], [a.id, 2], [b.id, 3], [c.id, 4]], "inserting at 1 shifts the others");
    const e = await add({ tab_order: 99 });
    t.equal(e.tab_order, 5, "beyond the end goes last");
    await api.put(`/api/form-elements/${c.id}`, { tab_order: 2 });
    t.same(await tabOrders(w.id), [[d.id, 1], [c.id, 2], [a.id, 3], [b.id, 4], [e.id, 5]], "a move shifts those between");
    await api.put(`/api/form-elements/${d.id}`, { tab_order: 4 });
    t.same(await tabOrders(w.id), [[c.id, 1], [a.id, 2], [b.id, 3], [d.id, 4], [e.id, 5]]);
    await api.delete(`/api/form-elements/${a.id}`);
    t.same(await tabOrders(w.id), [[c.id, 1], [b.id, 2], [d.id, 3], [e.id, 4]], "a delete closes the gap");

    const version = (await api.get(`/api/form-windows/${w.id}`)).body.form_window.version;
    const res = await api.put(`/api/form-windows/${w.id}/layout`, {
      version,
      elements: [
        { id: e.id, element_type: "separator_horizontal", tab_order: 10 },
        { element_type: "button_new", button_label: "New", button_action: "new", tab_order: 5 },
        { id: b.id, element_type: "separator_vertical", x_position: 5 },
        { id: c.id, element_type: "separator_horizontal", tab_order: 7 },
      ],
    });
    t.equal(res.status, 200, res.text);
    const after = res.body.form_window.elements;
    t.same(after.map((x: { tab_order: number }) => x.tab_order), [1, 2, 3, 4]);
    t.same(after.map((x: { element_type: string }) => x.element_type), ["button_new", "separator_horizontal", "separator_horizontal", "separator_vertical"]);
    t.same(after.slice(1).map((x: { id: number }) => x.id), [c.id, e.id, b.id], "ordered by the given tab order, then the list; d deleted");
    t.equal(res.body.form_window.version, version + 1);
    const dup = await api.put(`/api/form-windows/${w.id}/layout`, {
      version: version + 1,
      elements: [
        { element_type: "separator_horizontal", tab_order: 1 },
        { element_type: "separator_horizontal", tab_order: 1 },
      ],
    });
    t.equal(dup.status, 422, "two elements with one tab order");
  });

  t.test("layout writes: checked as a whole, atomic; concurrent writes: one wins, the other 409", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const one = (await api.post("/api/form-elements", { form_window_id: w.id, element_type: "separator_horizontal" })).body.form_element;
    const version = (await api.get(`/api/form-windows/${w.id}`)).body.form_window.version;
    const broken = await api.put(`/api/form-windows/${w.id}/layout`, {
      version,
      elements: [
        { element_type: "separator_horizontal" },
        { element_type: "field_textinput", field_name: "users.nope", control_type: "text" },
        { element_type: "separator_horizontal", x_position: 590, width: 20 },
      ],
    });
    t.equal(broken.status, 422);
    t.same(Object.keys(broken.body.errors).sort(), ["elements.1.field_name", "elements.2.x_position"]);
    t.same(await tabOrders(w.id), [[one.id, 1]], "nothing written");
    const other = await newWindow(set.id);
    const foreign = (await api.post("/api/form-elements", { form_window_id: other.id, element_type: "separator_horizontal" })).body.form_element;
    const stolen = await api.put(`/api/form-windows/${w.id}/layout`, { version, elements: [{ id: foreign.id, element_type: "separator_horizontal" }] });
    t.equal(stolen.status, 422, "an element of another window");
    t.same(Object.keys(stolen.body.errors), ["elements.0.id"]);
    t.same(await tabOrders(w.id), [[one.id, 1]], "nothing written");
    t.equal((await api.get(`/api/form-windows/${w.id}`)).body.form_window.version, version, "the version stays");

    const write = (label: string) =>
      api.put(`/api/form-windows/${w.id}/layout`, { version, elements: [{ id: one.id, element_type: "button_save", button_label: label, button_action: "save" }] });
    const results = await Promise.all([write("A"), write("B"), write("C")]);
    const statuses = results.map((r) => r.status).sort();
    t.same(statuses, [200, 409, 409], "one wins");
    const loser = results.find((r) => r.status === 409)!;
    t.equal(loser.body.code, "version_conflict");
    const winner = results.find((r) => r.status === 200)!;
    const now = (await api.get(`/api/form-windows/${w.id}`)).body.form_window;
    t.equal(now.elements[0].button_label, winner.body.form_window.elements[0].button_label, "the winner's write stands");
    t.equal(now.version, version + 1);
    const stale = await api.put(`/api/form-windows/${w.id}/layout`, { version, elements: [] });
    t.equal(stale.status, 409, "a stale version");
    t.same(await tabOrders(w.id), [[one.id, 1]], "a stale write deletes nothing");
  });

  t.test("a layout write rewrites only the elements that changed", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const elements = Array.from({ length: 5 }, (_, i) => ({ element_type: "separator_horizontal", x_position: 0, y_position: i * 20, width: 100, height: 2 }));
    const first = await api.put(`/api/form-windows/${w.id}/layout`, { version: w.version, elements });
    t.equal(first.status, 200, first.text);
    const ids: number[] = first.body.form_window.elements.map((e: { id: number }) => e.id);
    // A row's xmin is the transaction that last wrote it.
    const writers = () => app.pool.anyFirst(sql.type(z.object({ xmin: z.string() }))`
      select xmin::text as xmin from form_elements where id = any(${sql.array(ids, "int8")}) order by id`);
    const before = await writers();
    const moved = elements.map((e, i) => ({ ...e, id: ids[i], x_position: i === 2 ? 40 : 0 }));
    const second = await api.put(`/api/form-windows/${w.id}/layout`, { version: first.body.form_window.version, elements: moved });
    t.equal(second.status, 200, second.text);
    t.same(second.body.form_window.elements.map((e: { id: number; x_position: number; tab_order: number }) => [e.id, e.x_position, e.tab_order]), ids.map((id, i) => [id, i === 2 ? 40 : 0, i + 1]), "every element answered");
    t.equal(second.body.form_window.version, first.body.form_window.version + 1);
    const after = await writers();
    t.same(after.map((xmin, i) => xmin === before[i]), [true, true, false, true, true], "only the moved element was written");
    const same = await api.put(`/api/form-windows/${w.id}/layout`, { version: second.body.form_window.version, elements: moved });
    t.equal(same.status, 200);
    t.same(await writers(), after, "the same layout again writes no element");
    t.equal(same.body.form_window.elements.length, 5);
  });

  t.test("a layout write stores every field of every kind as sent", async (t) => {
    const set = await newSet();
    const w = await newWindow(set.id);
    const common = { x_position: 3, y_position: 4, width: 50, height: 20, sort_order: 7, is_visible: false, background_color: "#123456", border_width: 2, border_color: "#654321", anchor_right: 5, anchor_bottom: 6, anchor_width: 7, anchor_height: 8 };
    const sent = Object.entries(kinds).map(([type, fields]) => ({ element_type: type, ...common, ...fields }));
    const res = await api.put(`/api/form-windows/${w.id}/layout`, { version: w.version, elements: sent });
    t.equal(res.status, 200, res.text);
    const stored = (await api.get(`/api/form-windows/${w.id}`)).body.form_window.elements;
    t.equal(stored.length, sent.length);
    sent.forEach((element, i) => t.match(stored[i], { ...element, tab_order: i + 1 }, element.element_type));
    t.same(res.body.form_window.elements, stored, "the answer is what was stored");
  });

  t.test("layout writes check field placements against the schema as it is now, though the fields are cached", async (t) => {
    const shopId = await buildSchema(app.pool, projectId, alice.user.id, "CREATE TABLE customers (id SERIAL PRIMARY KEY, email TEXT);", "shop");
    const set = await newSet({ schema_id: shopId });
    const w = await newWindow(set.id);
    let version = w.version;
    const place = async (field: string) => {
      const res = await api.put(`/api/form-windows/${w.id}/layout`, { version, elements: [{ element_type: "field_textinput", field_name: field, control_type: "text" }] });
      if (res.status === 200) version = res.body.form_window.version;
      return res;
    };
    const setFields = (names: string[]) =>
      app.pool.query(sql.type(z.object({}))`
        update schemas set parsed = jsonb_set(parsed, '{tables,0,fields}', ${sql.jsonb(names.map((field_name) => ({ field_name })))})
        where id = ${shopId}`);
    t.equal((await place("customers.email")).status, 200);
    t.equal((await place("customers.phone")).status, 422, "not a field yet");
    await setFields(["id", "email", "phone"]);
    t.equal((await place("customers.phone")).status, 200, "a field added to the schema is seen at once");
    await setFields(["id", "phone"]);
    const gone = await place("customers.email");
    t.equal(gone.status, 422, "a field removed from the schema is refused at once");
    t.same(Object.keys(gone.body.errors), ["elements.0.field_name"]);
    await app.pool.query(sql.type(z.object({}))`update form_sets set schema_id = null where id = ${set.id}`);
    t.equal((await place("users.email")).status, 200, "the set's schemas changed: the project's other schema counts");
  });

  t.test("clone: a deep copy equal to the original but for ids and cloned_from_id", async (t) => {
    const set = await newSet({ visibility: "public", description: "to copy" });
    const w1 = await newWindow(set.id, { window_type: "main_menu", display_name: "Menu" });
    const w2 = await newWindow(set.id);
    for (const [type, fields] of Object.entries(kinds)) await api.post("/api/form-elements", { form_window_id: w1.id, element_type: type, ...fields });
    await api.post("/api/form-elements", { form_window_id: w2.id, element_type: "separator_vertical", anchor_bottom: 5 });
    const original = (await api.get(`/api/form-sets/${set.id}`)).body.form_set;
    const res = await api.post(`/api/form-sets/${set.id}/clone`);
    t.equal(res.status, 201, res.text);
    const copy = res.body.form_set;
    t.equal(copy.cloned_from_id, set.id);
    t.not(copy.id, set.id);
    const strip = (s: Record<string, unknown>): unknown =>
      JSON.parse(
        JSON.stringify(s, (key, value) => (["id", "form_set_id", "form_window_id", "created_at", "updated_at", "cloned_from_id"].includes(key) ? undefined : value)),
      );
    t.same(strip(copy), strip(original));
    t.equal(copy.windows[0].elements.length, Object.keys(kinds).length);
    const copyIds = copy.windows.flatMap((w: { id: number; elements: { id: number }[] }) => [w.id, ...w.elements.map((e) => e.id)]);
    const originalIds = original.windows.flatMap((w: { id: number; elements: { id: number }[] }) => [w.id, ...w.elements.map((e) => e.id)]);
    t.same(copyIds.filter((id: number) => originalIds.includes(id)), [], "new ids throughout");
    await api.delete(`/api/form-sets/${set.id}`);
    t.equal((await api.get(`/api/form-sets/${copy.id}`)).body.form_set.cloned_from_id, null, "the copy outlives its original");
  });
});
