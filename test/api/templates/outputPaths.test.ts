/**
 * Output paths a template may not produce, through HTTP with a worker: a `.git` folder (in any
 * spelling git itself refuses), Windows device names and characters, and paths that differ only
 * in case. Preview and structure warn; execute is a 422 naming the path and records
 * nothing; saving a template file under such a name is refused.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

const count = z.object({ count: z.number() });

t.test("output paths that are not portable", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const base = `/api/projects/${project}/templates`;
  const generations = () => app.pool.oneFirst(sql.type(count)`select count(*)::int as count from code_generations where project_id = ${project}`);
  const warningsOf = (body: { warnings: { message: string }[] }) => body.warnings.map((w) => w.message).join("\n");

  // A stranger's template: its file names are placeholders whose values come from the run.
  const template = await buildTemplate(app.pool, { projectId: project }, user.id, {
    content: "",
    variables: [{ name: "dir", type: "string", required: true }, { name: "name", type: "string", required: true }],
    files: [
      { file_name: "{:dir:}/hooks/post-checkout", content: "#!/bin/sh\necho owned" },
      { file_name: "src/{:name:}.ts", content: "export {};" },
      { file_name: "README.md", content: "kept" },
    ],
  });

  t.test("a .git folder, in any spelling git refuses, is a preview warning and an execute 422", async (t) => {
    for (const dir of [".git", ".GIT", "git~1", ".git.", ".g\u200cit"]) {
      const before = await generations();
      const preview = await api.post(`${base}/${template}/preview`, { dir, name: "user" });
      t.equal(preview.status, 200, preview.text);
      t.match(warningsOf(preview.body), /hooks\/post-checkout` is refused: .*(git folder|ends in a dot)/, `${JSON.stringify(dir)}: the preview says why`);
      const run = await api.post(`${base}/${template}/execute`, { dir, name: "user" });
      t.equal(run.status, 422, run.text);
      t.equal(run.body.code, "template_error");
      t.match(JSON.stringify(run.body.errors), /hooks\/post-checkout.*is refused/, `${JSON.stringify(dir)}: execute names the path`);
      t.equal(await generations(), before, "nothing recorded");
    }
  });

  t.test("Windows device names and characters are refused", async (t) => {
    for (const name of ["nul", "CON", "Com1", "a:b", "what?"]) {
      const preview = await api.post(`${base}/${template}/preview`, { dir: "hooks", name });
      t.equal(preview.status, 200, preview.text);
      t.match(warningsOf(preview.body), /Output path `src\/.*` is refused: .*Windows/, `${name}: the preview says why`);
      const run = await api.post(`${base}/${template}/execute`, { dir: "hooks", name });
      t.equal(run.status, 422, run.text);
      t.match(JSON.stringify(run.body.errors), /Windows/);
    }
    const fine = await api.post(`${base}/${template}/execute`, { dir: "hooks", name: "console" });
    t.equal(fine.status, 200, fine.text);
    t.same(Object.keys(fine.body.files).sort(), ["README.md", "hooks/hooks/post-checkout", "src/console.ts"]);
  });

  t.test("paths that differ only in case, in a file name or a folder, are named together", async (t) => {
    const repeated = await buildTemplate(app.pool, { projectId: project }, user.id, {
      name: "Models",
      content: "",
      variables: [{ name: "models", type: "list", required: true }],
      files: [{ file_name: "{:item.dir:}/{:item.name:}.ts", repeat: "models", content: "{:item.name:}" }],
    });
    const cases: [unknown[], RegExp][] = [
      [[{ dir: "src", name: "User" }, { dir: "src", name: "user" }], /`src\/User\.ts` and `src\/user\.ts` differ only in case/],
      [[{ dir: "Models", name: "a" }, { dir: "models", name: "b" }], /`Models\/a\.ts` and `models\/b\.ts` clash on macOS and Windows/],
    ];
    for (const [models, message] of cases) {
      const before = await generations();
      const preview = await api.post(`${base}/${repeated}/preview`, { models });
      t.equal(preview.status, 200, preview.text);
      t.match(warningsOf(preview.body), message);
      const structure = await api.get(`${base}/${repeated}/structure?values=${encodeURIComponent(JSON.stringify({ models }))}`);
      t.equal(structure.status, 200, structure.text);
      t.equal(structure.body.paths.length, 1, "the structure lists the first path only");
      t.match(warningsOf(structure.body), message, "and warns about the second");
      const run = await api.post(`${base}/${repeated}/execute`, { models });
      t.equal(run.status, 422, run.text);
      t.match(run.body.errors.files[0], message);
      t.equal(await generations(), before, "nothing recorded");
    }
    const fine = await api.post(`${base}/${repeated}/execute`, { models: [{ dir: "Models", name: "a" }, { dir: "Models", name: "b" }] });
    t.equal(fine.status, 200, fine.text);
  });

  t.test("a template file cannot be saved under a name that is never portable", async (t) => {
    for (const file_name of [".git/hooks/pre-commit", "src/.Git/config", "lib/aux.ts", "a|b.ts"]) {
      const saved = await api.post(`${base}/${template}/files`, { file_name, content: "x" });
      t.equal(saved.status, 422, `${file_name}: ${saved.text}`);
      t.match(saved.body.errors.file_name[0], /not a safe relative path/);
    }
    const gitignore = await api.post(`${base}/${template}/files`, { file_name: ".gitignore", content: "node_modules" });
    t.equal(gitignore.status, 201, gitignore.text);
  });
});
