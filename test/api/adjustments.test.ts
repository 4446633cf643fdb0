/**
 * Code adjustments end to end, through the API with a worker: a generated file is edited,
 * the template changes and runs again, and applying the adjustments keeps the edit where the
 * template's lines did not change, reports a conflict with markers where they did, and
 * `file_missing` for a file the template no longer writes; applying twice finds the edit
 * `already_present`; the generation applied to is never changed. Adjustments from a diff
 * (422 naming the hunk), editing and pausing them, a generator's `apply_adjustments` flag
 * (with a template removed from it), and who may do what.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken, projectStateRefusals, setProjectState } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";

/** A class body of `n` numbered members, one per line. */
const members = (n: number, name: string) => Array.from({ length: n }, (_, i) => `  ${name}${i + 1}: string;\n`).join("");
const userTs = (extra = "") => `export class User {\n${members(12, "field")}${extra}}\n`;
const postTs = (title = "title") => `export class Post {\n  id: number;\n  ${title}: string;\n${members(8, "meta")}}\n`;

t.test("code adjustments", async (t) => {
  const app = await startTestApp(t, { worker: true });
  // The admin role: the spec lets only an admin change a generator (its flag, below).
  const { user, token } = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  await buildTeam(app.pool, user.id, { [viewer.user.id]: 4 }, [project]);
  const template = await buildTemplate(app.pool, { projectId: project }, user.id, {
    name: "Models",
    content: "",
    variables: [],
    files: [
      { file_name: "src/User.ts", content: userTs() },
      { file_name: "src/Post.ts", content: postTs() },
      { file_name: "README.md", content: "# Models\n\nGenerated.\n" },
    ],
  });
  const execute = async () => {
    const res = await api.post(`/api/projects/${project}/templates/${template}/execute`, {});
    t.equal(res.status, 200, res.text);
    return res.body as { code_generation_id: number; files: Record<string, string> };
  };
  const fileOf = async (generation: number, path: string) =>
    (
      await app.pool.oneFirst(sql.type(z.object({ content: z.instanceof(Buffer) }))`
        select content from code_generation_files where code_generation_id = ${generation} and path = ${path}`)
    ).toString();
  const filesOf = async (generation: number) =>
    Object.fromEntries(
      (await app.pool.any(sql.type(z.object({ path: z.string(), content: z.instanceof(Buffer) }))`
        select path, content from code_generation_files where code_generation_id = ${generation} order by path`)).map((r) => [r.path, r.content.toString()]),
    );

  const first = await execute();
  const g1 = first.code_generation_id;
  const editedUser = first.files["src/User.ts"]!.replace("  field2: string;\n", "  field2: string; // keep: validated by the form\n");
  const editedPost = first.files["src/Post.ts"]!.replace("  title: string;\n", "  headline: string;\n");
  const ids: Record<string, number> = {};

  await t.test("create from the edited file: the diff is stored", async (t) => {
    const res = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", content: editedUser });
    t.equal(res.status, 201, res.text);
    t.match(res.body.adjustment, { template_id: template, generator_id: null, file_path: "src/User.ts", base_generation_id: g1, content: editedUser, additions: 1, deletions: 1, is_active: true });
    t.match(res.body.adjustment.diff, /^--- a\/src\/User\.ts\n\+\+\+ b\/src\/User\.ts\n@@ .* @@\n/);
    t.match(res.body.adjustment.diff, /\n- {2}field2: string;\n\+ {2}field2: string; \/\/ keep: validated by the form\n/);
    ids.user = res.body.adjustment.id;
    const post = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/Post.ts", content: editedPost });
    t.equal(post.status, 201, post.text);
    ids.post = post.body.adjustment.id;
  });

  await t.test("create from a unified diff; a hunk that does not apply is named", async (t) => {
    const diff = "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # Models\n \n-Generated.\n+Generated, then explained by hand.\n";
    const res = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "README.md", diff });
    t.equal(res.status, 201, res.text);
    t.equal(res.body.adjustment.content, "# Models\n\nGenerated, then explained by hand.\n");
    ids.readme = res.body.adjustment.id;
    const stale = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "README.md", diff: diff.replace("-Generated.", "-Generated long ago.") });
    t.equal(stale.status, 422);
    t.match(stale.body.errors.diff, [/^Hunk 1 of 1 \(@@ -1,3 \+1,3 @@\) does not apply to README\.md/]);
    const other = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", diff });
    t.match(other.body.errors.diff, ["The diff is for README.md, not src/User.ts."]);
    // jsdiff applies hunks out of order or overlapping by duplicating lines; patch refuses them.
    const misordered = "--- a/README.md\n+++ b/README.md\n@@ -3 +3 @@\n-Generated.\n+Explained.\n@@ -1 +1 @@\n-# Models\n+# Types\n";
    const refused = await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "README.md", diff: misordered });
    t.equal(refused.status, 422, refused.text);
    t.match(refused.body.errors.diff, [/^Hunk 2 of 2 \(@@ -1,1 \+1,1 @@\) starts before hunk 1 \(@@ -3,1 \+3,1 @@\) ends/]);
    const overlapping = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# Models\n+# Types\n@@ -1 +1 @@\n-# Models\n+# Types\n";
    t.equal((await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "README.md", diff: overlapping })).status, 422);
  });

  await t.test("validation", async (t) => {
    const post = (body: unknown) => api.post(`/api/code-generations/${g1}/adjustments`, body);
    t.match((await post({ file_path: "src/User.ts" })).body.errors, { content: [/required when diff is not present/] });
    t.match((await post({ file_path: "src/User.ts", content: "x", diff: "y" })).body.errors, { diff: [/not both/] });
    t.match((await post({ file_path: "nope.ts", content: "x" })).body.errors, { file_path: [`Code generation ${g1} has no file nope.ts.`] });
    t.match((await post({ file_path: "src/User.ts", content: first.files["src/User.ts"] })).body.errors, { content: [/nothing to adjust/] });
    t.equal((await post({ content: "x" })).status, 422);
    t.equal((await api.put(`/api/code-adjustments/${ids.user}`, {})).status, 422);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from code_adjustments`);
    t.equal(count, 3, "nothing written by the refusals");
  });

  let g2 = 0;
  let g3 = 0;
  await t.test("the template changes; applying keeps the edit, shows conflicts, reports missing files", async (t) => {
    const changed = await api.put(`/api/projects/${project}/templates/${template}`, {
      files: [
        { file_name: "src/User.ts", content: userTs("  createdAt: Date;\n") },
        { file_name: "src/Post.ts", content: postTs("subject") },
      ],
    });
    t.equal(changed.status, 200, changed.text);
    g2 = (await execute()).code_generation_id;
    const before = await filesOf(g2);
    const res = await api.post(`/api/code-generations/${g2}/apply-adjustments`);
    t.equal(res.status, 201, res.text);
    g3 = res.body.code_generation_id;
    t.not(g3, g2);
    t.equal(res.body.adjusted_from_id, g2);
    t.same(res.body.files, [
      { file_path: "src/User.ts", status: "applied", adjustment_id: ids.user, conflicts: 0 },
      { file_path: "src/Post.ts", status: "conflict", adjustment_id: ids.post, conflicts: 1 },
      { file_path: "README.md", status: "file_missing", adjustment_id: ids.readme, conflicts: 0 },
    ]);
    t.same(res.body.conflicts, ["src/Post.ts"]);
    t.match(res.body.message, /conflicts in 1 file/);

    const user = await fileOf(g3, "src/User.ts");
    t.match(user, "  field2: string; // keep: validated by the form\n", "the edit is kept");
    t.match(user, "  createdAt: Date;\n", "and so is the template's change");
    t.equal(await fileOf(g3, "src/Post.ts"), postTs("subject").replace(
      "  subject: string;\n",
      `<<<<<<< adjustment #${ids.post}\n  headline: string;\n||||||| generation #${g1}\n  title: string;\n=======\n  subject: string;\n>>>>>>> generation #${g2}\n`,
    ));
    t.same(await filesOf(g2), before, "the generation applied to is unchanged");
    t.same(Object.keys(await filesOf(g3)), Object.keys(before), "the new generation has every file");
    const shown = await api.get(`/api/code-generations/${g3}`);
    t.match(shown.body.code_generation, { id: g3, adjusted_from_id: g2 });
  });

  await t.test("applying twice: already present", async (t) => {
    await api.put(`/api/code-adjustments/${ids.post}`, { is_active: false });
    const res = await api.post(`/api/code-generations/${g3}/apply-adjustments`);
    t.equal(res.status, 201, res.text);
    t.same(res.body.files.map((f: { file_path: string; status: string }) => [f.file_path, f.status]), [
      ["src/User.ts", "already_present"],
      ["README.md", "file_missing"],
    ], "the paused adjustment is left out");
    t.equal(await fileOf(res.body.code_generation_id, "src/User.ts"), await fileOf(g3, "src/User.ts"));
  });

  await t.test("editing an adjustment keeps its base; deleting it", async (t) => {
    const edited = await api.put(`/api/code-adjustments/${ids.user}`, { content: editedUser.replace("field3", "field3Renamed") });
    t.equal(edited.status, 200, edited.text);
    t.match(edited.body.adjustment, { base_generation_id: g1, additions: 2, deletions: 2 });
    const shown = await api.get(`/api/code-adjustments/${ids.user}`);
    t.equal(shown.body.adjustment.content, editedUser.replace("field3", "field3Renamed"));
    const listed = await api.get(`/api/code-generations/${g2}/adjustments`);
    t.same(listed.body.data.map((a: { id: number; is_active: boolean }) => [a.id, a.is_active]), [[ids.user, true], [ids.post, false], [ids.readme, true]]);
    t.equal((await api.delete(`/api/code-adjustments/${ids.readme}`)).status, 200);
    t.equal((await api.get(`/api/code-adjustments/${ids.readme}`)).status, 404);
    await api.delete(`/api/code-adjustments/${ids.user}`);
    const none = await api.post(`/api/code-generations/${g2}/apply-adjustments`);
    t.equal(none.status, 422);
    t.equal(none.body.code, "no_adjustments");
  });

  await t.test("who may do what", async (t) => {
    const as = (who: string) => client(app.url, who);
    const adjustment = (await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", content: editedUser })).body.adjustment.id;
    t.equal((await as(viewer.token).get(`/api/code-generations/${g1}/adjustments`)).status, 200, "a viewer reads");
    t.equal((await as(viewer.token).get(`/api/code-adjustments/${adjustment}`)).status, 200);
    t.equal((await as(viewer.token).post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", content: "x" })).status, 403, "but may not adjust");
    t.equal((await as(viewer.token).put(`/api/code-adjustments/${adjustment}`, { is_active: false })).status, 403);
    t.equal((await as(viewer.token).delete(`/api/code-adjustments/${adjustment}`)).status, 403);
    t.equal((await as(viewer.token).post(`/api/code-generations/${g1}/apply-adjustments`)).status, 403);
    for (const [method, path] of [
      ["GET", `/api/code-generations/${g1}/adjustments`],
      ["GET", `/api/code-adjustments/${adjustment}`],
      ["PUT", `/api/code-adjustments/${adjustment}`],
      ["DELETE", `/api/code-adjustments/${adjustment}`],
      ["POST", `/api/code-generations/${g1}/apply-adjustments`],
    ] as const) {
      const body = method === "PUT" ? { body: { is_active: false } } : {};
      t.equal((await request(app.url, method, path, { token: stranger.token, ...body })).status, 404, `a stranger: ${method} ${path}`);
      t.equal((await request(app.url, method, path, body)).status, 401);
    }
  });

  await t.test("a locked, expired or archived project refuses every change of its adjustments, and nothing changes", async (t) => {
    const adjustment = (await api.post(`/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", content: editedUser })).body.adjustment.id;
    const stored = () => app.pool.oneFirst(sql.type(z.object({ rows: z.string() }))`select coalesce(jsonb_agg(to_jsonb(a) order by a.id), '[]')::text as rows from code_adjustments a where a.project_id = ${project}`);
    const before = await stored();
    for (const { state, status, code } of projectStateRefusals) {
      await setProjectState(app.pool, project, state);
      for (const [method, path, body] of [
        ["POST", `/api/code-generations/${g1}/adjustments`, { file_path: "src/User.ts", content: editedUser }],
        ["PUT", `/api/code-adjustments/${adjustment}`, { is_active: false }],
        ["DELETE", `/api/code-adjustments/${adjustment}`, undefined],
        ["POST", `/api/code-generations/${g1}/apply-adjustments`, undefined],
      ] as const) {
        const res = await request(app.url, method, path, { token, ...(body ? { body } : {}) });
        t.match({ status: res.status, code: res.body?.code }, { status, code }, `${state}: ${method} ${path}`);
      }
    }
    t.equal(await stored(), before, "no adjustment changed");
    await setProjectState(app.pool, project, "normal");
  });

  await t.test("a generator with apply_adjustments applies them on every run; a removed template's files are missing", async (t) => {
    const extra = await buildTemplate(app.pool, { projectId: project }, user.id, {
      name: "Extra",
      content: "",
      variables: [],
      files: [{ file_name: "extra/Notes.md", content: "notes\n" }],
    });
    const created = await api.post("/api/generators", { project_id: project, name: "Models and notes", template_ids: [template, extra], apply_adjustments: true });
    t.equal(created.status, 201, created.text);
    t.equal(created.body.generator.apply_adjustments, true);
    const generator = created.body.generator.id;
    const run = async () => {
      const res = await api.post(`/api/generators/${generator}/execute`, {});
      t.equal(res.status, 200, res.text);
      return res.body;
    };
    const plain = await run();
    t.equal(plain.adjustments, undefined, "nothing to apply yet: the plain generation");
    const notes = await api.post(`/api/code-generations/${plain.code_generation_id}/adjustments`, { file_path: "extra/Notes.md", content: "notes\nby hand\n" });
    t.equal(notes.status, 201, notes.text);
    t.equal(notes.body.adjustment.generator_id, generator, "keyed by the generator that produced the file");
    const applied = await run();
    t.equal(applied.files["extra/Notes.md"], "notes\nby hand\n", "the run answers the adjusted files");
    t.match(applied.adjustments, { files: [{ file_path: "extra/Notes.md", status: "applied" }], conflicts: [] });
    t.equal(await fileOf(applied.code_generation_id, "extra/Notes.md"), "notes\nby hand\n");
    t.equal(await fileOf(applied.adjustments.adjusted_from_id, "extra/Notes.md"), "notes\n", "the rendered generation is kept as rendered");

    t.equal((await api.delete(`/api/projects/${project}/templates/${extra}`)).status, 200);
    const without = await run();
    t.same(without.adjustments.files, [{ file_path: "extra/Notes.md", status: "file_missing", adjustment_id: notes.body.adjustment.id, conflicts: 0 }]);
    t.equal((await api.put(`/api/generators/${generator}`, { apply_adjustments: false })).body.generator.apply_adjustments, false);
    t.equal((await run()).adjustments, undefined, "the flag off: no apply");
  });
});
