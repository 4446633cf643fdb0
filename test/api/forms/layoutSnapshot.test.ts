/**
 * Layout writes from a remembered context (shared/forms/windowContextCache.ts): after a write,
 * the next write of the same window by the same user skips the read and checks its list
 * against what this process remembers, while the write statement re-checks that memory. Each
 * case below changes one thing the memory holds between two writes, the way another request
 * or process would, and the second write must answer as if it had read everything fresh.
 */
import t, { type Test } from "tap";
import pg from "pg";
import type { QuerySqlToken } from "slonik";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { windowSnapshot } from "../../../shared/forms/windowContextCache.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { designerWorld } from "../../support/formDesigner.ts";

const ignored = z.object({});
const button = { element_type: "button_save", button_label: "Save", button_action: "save" };

t.test("a layout write from a remembered context answers as one from a fresh read", async (t) => {
  const app = await startTestApp(t);
  const { designer: alice, api, projectId, schemaId } = await designerWorld(app);
  const run = (query: QuerySqlToken<typeof ignored>) => app.pool.query(query);

  /** A new set and window, written once so that this process remembers them. */
  const remembered = async (t: Test, visibility = "private") => {
    const set = (await api.post("/api/form-sets", { name: "Screens", project_id: projectId, schema_id: schemaId, visibility })).body.form_set;
    const window = (await api.post("/api/form-windows", { form_set_id: set.id, name: "Edit", window_type: "create_edit" })).body.form_window;
    const first = await api.put(`/api/form-windows/${window.id}/layout`, { version: window.version, elements: [button] });
    t.equal(first.status, 200, first.text);
    const version: number = first.body.form_window.version;
    t.ok(windowSnapshot(window.id, alice.user.id, version), "the write left the window's context in memory");
    return { set, window, version };
  };
  const write = (windowId: number, version: number, elements: unknown[]) => api.put(`/api/form-windows/${windowId}/layout`, { version, elements });

  t.test("a write from memory leaves the next version in memory", async (t) => {
    const { window, version } = await remembered(t);
    const second = await write(window.id, version, [{ ...button, x_position: 30 }]);
    t.equal(second.status, 200, second.text);
    t.ok(windowSnapshot(window.id, alice.user.id, version + 1), "remembered at the new version");
    t.notOk(windowSnapshot(window.id, alice.user.id, version), "not at the old one");
    t.equal((await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements[0].x_position, 30, "written");
  });

  t.test("dates answered from memory are the stored ones", async (t) => {
    const { window, version } = await remembered(t);
    const stored = async () => (await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements;
    const first = await write(window.id, version, [{ ...button, x_position: 0 }, { ...button, x_position: 120 }]);
    t.equal(first.status, 200, first.text);
    t.same(first.body.form_window.elements, await stored(), "two new elements");
    // Later writes get a later now() (the timestamps are milliseconds).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const [a, b] = first.body.form_window.elements as { id: number }[];
    const moved = await write(window.id, version + 1, [{ ...button, id: a!.id, x_position: 0 }, { ...button, id: b!.id, x_position: 150 }]);
    t.equal(moved.status, 200, moved.text);
    const after = await stored();
    t.same(moved.body.form_window.elements, after, "one sent back unchanged (by id, new before), one moved");
    t.equal(after[0].updated_at, first.body.form_window.elements[0].updated_at, "the unchanged one kept its date");
    t.not(after[1].updated_at, first.body.form_window.elements[1].updated_at, "the moved one has a new date");
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await write(window.id, version + 2, [{ ...button, id: a!.id, x_position: 0 }, { ...button, id: b!.id, x_position: 150 }, button]);
    t.equal(again.status, 200, again.text);
    t.same(again.body.form_window.elements, await stored(), "both unchanged, one added");
  });

  t.test("the set's button colours changed: the new element takes the new colour", async (t) => {
    const { set, window, version } = await remembered(t);
    t.equal((await api.put(`/api/form-sets/${set.id}`, { default_button_color: "#112233" })).status, 200);
    const res = await write(window.id, version, [button]);
    t.equal(res.status, 200, res.text);
    t.equal(res.body.form_window.elements[0].button_background_color, "#112233");
  });

  t.test("the project snaps to a grid now: positions are snapped", async (t) => {
    const { window, version } = await remembered(t);
    t.equal((await api.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: true, form_designer_grid_size: 20 })).status, 200);
    t.teardown(() => api.put(`/api/projects/${projectId}`, { form_designer_snap_to_grid: false }));
    const res = await write(window.id, version, [{ ...button, x_position: 33, y_position: 9 }]);
    t.equal(res.status, 200, res.text);
    t.match(res.body.form_window.elements[0], { x_position: 40, y_position: 0, width: 100, height: 40 });
  });

  t.test("the window shrank without a new version: the element outside it is refused", async (t) => {
    const { window, version } = await remembered(t);
    await run(sql.type(ignored)`update form_windows set default_width = 320 where id = ${window.id}`);
    const res = await write(window.id, version, [{ ...button, x_position: 300 }]);
    t.equal(res.status, 422, res.text);
    t.same(Object.keys(res.body.errors), ["elements.0.x_position"]);
    t.match(res.body.errors["elements.0.x_position"], [/window's width of 320/]);
  });

  t.test("a window change committed while the write waits for the window's lock is seen", async (t) => {
    const { window, version } = await remembered(t);
    // Another session holds the window row with a change not yet committed.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query("begin");
    await holder.query("update form_windows set default_width = 320 where id = $1", [window.id]);
    const pending = write(window.id, version, [{ ...button, x_position: 300 }]);
    // The write has checked the list against its memory and waits on the window row.
    for (let waited = 0; ; waited += 20) {
      const waiting = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if (waiting > 0) break;
      if (waited > 5000) throw new Error("the layout write never waited for the window's lock");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await holder.query("commit");
    const res = await pending;
    t.equal(res.status, 422, res.text);
    t.same(Object.keys(res.body.errors), ["elements.0.x_position"], "checked against the window as committed");
    t.equal((await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements[0].x_position, 0, "nothing written");
  });

  t.test("another writer moved the version on: 409, nothing written", async (t) => {
    const { window, version } = await remembered(t);
    await run(sql.type(ignored)`update form_windows set version = version + 1 where id = ${window.id}`);
    const res = await write(window.id, version, []);
    t.equal(res.status, 409, res.text);
    t.equal(res.body.code, "version_conflict");
    t.equal((await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements.length, 1, "the element stays");
  });

  t.test("the project was locked: 423", async (t) => {
    const { window, version } = await remembered(t);
    await run(sql.type(ignored)`update projects set is_locked = true where id = ${projectId}`);
    t.teardown(() => run(sql.type(ignored)`update projects set is_locked = false where id = ${projectId}`));
    const res = await write(window.id, version, []);
    t.equal(res.status, 423, res.text);
    t.equal(res.body.code, "project_locked");
  });

  t.test("the membership ended: 402 form_designer_locked", async (t) => {
    const { window, version } = await remembered(t);
    await run(sql.type(ignored)`
      update patron_memberships set started_at = now() - interval '2 days', expires_at = now() - interval '1 day' where user_id = ${alice.user.id}`);
    t.teardown(() => run(sql.type(ignored)`update patron_memberships set expires_at = now() + interval '30 days' where user_id = ${alice.user.id}`));
    const res = await write(window.id, version, []);
    t.equal(res.status, 402, res.text);
    t.equal(res.body.code, "form_designer_locked");
  });

  t.test("the set changed hands: 403 when she still reads it, 404 when she does not", async (t) => {
    const bob = await buildUserWithToken(app.pool);
    const open = await remembered(t, "public");
    await run(sql.type(ignored)`update form_sets set creator_user_id = ${bob.user.id} where id = ${open.set.id}`);
    const forbidden = await write(open.window.id, open.version, []);
    t.equal(forbidden.status, 403, forbidden.text);
    const closed = await remembered(t, "private");
    await run(sql.type(ignored)`update form_sets set creator_user_id = ${bob.user.id} where id = ${closed.set.id}`);
    t.equal((await write(closed.window.id, closed.version, [])).status, 404);
  });

  t.test("the window was deleted: 404", async (t) => {
    const { window, version } = await remembered(t);
    t.equal((await api.delete(`/api/form-windows/${window.id}`)).status, 200);
    t.equal((await write(window.id, version, [button])).status, 404);
  });

  t.test("an element of another window named: 422 on its id, the context kept apart", async (t) => {
    const { set, window, version } = await remembered(t);
    const other = (await api.post("/api/form-windows", { form_set_id: set.id, name: "Other", window_type: "create_edit" })).body.form_window;
    const foreign = (await api.post("/api/form-elements", { form_window_id: other.id, element_type: "separator_horizontal" })).body.form_element;
    const res = await write(window.id, version, [{ id: foreign.id, element_type: "separator_horizontal" }]);
    t.equal(res.status, 422, res.text);
    t.same(Object.keys(res.body.errors), ["elements.0.id"]);
    t.equal((await write(window.id, version, [{ ...button, button_label: "Again" }])).status, 200, "the window still takes writes at its version");
  });
});
