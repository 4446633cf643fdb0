/**
 * Form designer visibility: who reads, clones, edits and deletes a private, team and public
 * form set with its window and element. A refused write changes nothing in the form tables,
 * and an allowed one changes them (their fingerprint before and after).
 */
import t from "tap";
import type { Test } from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken, makePatron } from "../../support/factories.ts";
import { changedTables, fingerprinter } from "../../support/fuzz/fingerprint.ts";
import { client, type ApiResponse } from "../../support/http.ts";

/** What the form designer's routes write. */
const tables = ["form_sets", "form_windows", "form_elements", "form_designer_grants", "audit_log", "outbox_events"];

type Who = "creator" | "teamMember" | "other" | "admin";
type Visibility = "private" | "team" | "public";

/** Reads (set, window, element) and clone: who may, per visibility. Edits: the creator only (others who read get 403, others 404). */
const reads: Record<Visibility, Record<Who, boolean>> = {
  private: { creator: true, teamMember: false, other: false, admin: true },
  team: { creator: true, teamMember: true, other: false, admin: true },
  public: { creator: true, teamMember: true, other: true, admin: true },
};

t.test("form designer visibility matrix (sets, windows, elements)", async (t) => {
  const app = await startTestApp(t);
  const people = {
    creator: await buildUserWithToken(app.pool),
    teamMember: await buildUserWithToken(app.pool),
    other: await buildUserWithToken(app.pool),
    admin: await buildUserWithToken(app.pool, { roles: ["admin"] }),
  };
  for (const p of Object.values(people)) await makePatron(app.pool, p.user.id);
  await buildTeam(app.pool, people.creator.user.id, { [people.teamMember.user.id]: 4 });
  const as = (who: Who) => client(app.url, people[who].token);
  // No worker runs: nothing else writes while the fingerprints are taken.
  const fingerprint = await fingerprinter(app.pool, tables);
  /** Sends a write and checks its status and that it wrote (allowed) or wrote nothing (refused). */
  const write = async (t: Test, send: () => Promise<ApiResponse>, expected: number, what: string) => {
    const before = await fingerprint();
    const res = await send();
    t.equal(res.status, expected, what);
    const changed = changedTables(before, await fingerprint());
    if (expected >= 400) t.same(changed, [], `${what}: refused, wrote nothing`);
    else t.not(changed.length, 0, `${what}: wrote its change`);
    return res;
  };

  for (const visibility of ["private", "team", "public"] as const) {
    t.test(visibility, async (t) => {
      const creator = as("creator");
      const set = (await creator.post("/api/form-sets", { name: `A ${visibility} set`, visibility })).body.form_set;
      const window = (await creator.post("/api/form-windows", { form_set_id: set.id, name: "Main", window_type: "main_menu" })).body.form_window;
      const element = (await creator.post("/api/form-elements", { form_window_id: window.id, element_type: "separator_horizontal" })).body.form_element;
      for (const who of ["creator", "teamMember", "other", "admin"] as const) {
        const api = as(who);
        const canRead = reads[visibility][who];
        const readStatus = canRead ? 200 : 404;
        const editStatus = who === "creator" ? 200 : canRead ? 403 : 404;
        t.equal((await api.get(`/api/form-sets/${set.id}`)).status, readStatus, `${who} reads the set`);
        t.equal((await api.get(`/api/form-windows/${window.id}`)).status, readStatus, `${who} reads the window`);
        t.equal((await api.get(`/api/form-elements/${element.id}`)).status, readStatus, `${who} reads the element`);
        const listed = (await api.get("/api/form-sets?per_page=100")).body.data.some((s: { id: number }) => s.id === set.id);
        t.equal(listed, canRead, `${who} ${canRead ? "sees" : "does not see"} it in the list`);
        const clone = await write(t, () => api.post(`/api/form-sets/${set.id}/clone`), canRead ? 201 : 404, `${who} clones`);
        if (clone.status === 201) {
          t.equal(clone.body.form_set.creator_user_id, people[who].user.id, "the copy is the cloner's");
          t.equal(clone.body.form_set.visibility, who === "creator" ? visibility : "private");
        }
        await write(t, () => api.put(`/api/form-sets/${set.id}`, { name: "Mine" }), editStatus, `${who} updates the set`);
        await write(t, () => api.put(`/api/form-windows/${window.id}`, { name: "Mine" }), editStatus, `${who} updates the window`);
        await write(t, () => api.put(`/api/form-elements/${element.id}`, { x_position: 5 }), editStatus, `${who} updates the element`);
        const added = who === "creator" ? 201 : editStatus;
        await write(t, () => api.post("/api/form-elements", { form_window_id: window.id, element_type: "separator_vertical" }), added, `${who} adds an element`);
        if (who !== "creator") {
          await write(t, () => api.delete(`/api/form-elements/${element.id}`), editStatus, `${who} deletes the element`);
          await write(t, () => api.delete(`/api/form-windows/${window.id}`), editStatus, `${who} deletes the window`);
          await write(t, () => api.delete(`/api/form-sets/${set.id}`), editStatus, `${who} deletes the set`);
        }
      }
      t.equal((await creator.get(`/api/form-elements/${element.id}`)).status, 200, "still there after the others tried");
      t.equal((await creator.delete(`/api/form-sets/${set.id}`)).status, 200);
      t.equal((await creator.get(`/api/form-windows/${window.id}`)).status, 404, "windows go with their set");
    });
  }
});
