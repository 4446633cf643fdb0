/**
 * The full path through HTTP (issue: templates and code generation): register → verify →
 * project → schema → template with files repeated over the schema's tables → execute →
 * download the zip → its contents equal the `files` of the execute answer.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { startTestApp } from "../../support/app.ts";
import { client } from "../../support/http.ts";
import { startSmtp } from "../../support/smtp.ts";

const run = promisify(execFile);

const ddl = `
CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL UNIQUE, display_name TEXT);
CREATE TABLE blog_posts (
  id SERIAL PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title VARCHAR(200) NOT NULL,
  body TEXT
);`;

async function hasUnzip(): Promise<boolean> {
  try {
    await run("unzip", ["-v"]);
    return true;
  } catch {
    return false;
  }
}

t.test("register → project → schema → template → execute → download → unzip", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const anonymous = client(app.url);

  const registered = await anonymous.post("/api/auth/register", { name: "Linus", email: "linus@example.test", password: "correct horse battery" });
  t.equal(registered.status, 201, registered.text);
  const mail = await smtp.waitFor("linus@example.test", /./);
  const link = new URL(mail.links.find((l) => l.includes("/verify-email/"))!);
  const [, , id, hash] = link.pathname.split("/");
  const verified = await anonymous.post(`/api/auth/email/verify/${id}/${hash}${link.search}`);
  t.equal(verified.status, 200, verified.text);
  const api = client(app.url, verified.body.access_token as string);

  const project = await api.post("/api/projects", { name: "Blog" });
  t.equal(project.status, 201, project.text);
  const projectId = project.body.project.id as number;

  const schema = await api.post(`/api/projects/${projectId}/schemas`, { name: "blog", sql_text: ddl, database_type: "PostgreSQL" });
  t.equal(schema.status, 201, schema.text);
  const schemaId = schema.body.schema.id as number;

  const template = await api.post(`/api/projects/${projectId}/templates`, {
    name: "Models",
    description: "One model per table",
    content: "Models for {:schema.name:}: {:for schema.tables:}{:table_name|pascal|singular:}{:if not loop.last:}, {:endif:}{:endfor:}",
    engine_type: "ultimate",
    variables: [
      { name: "schema", type: "schema", required: true },
      { name: "namespace", type: "string", default_value: "App" },
    ],
    files: [
      {
        file_name: "src/{:namespace|kebab:}/{:table.table_name|pascal|singular:}.ts",
        repeat: "schema.tables",
        content: [
          "// {:namespace:}",
          "export interface {:table.table_name|pascal|singular:} {",
          "{:for field in table.fields:}",
          "  {:field.field_name|camel:}{:if field.is_nullable:}?{:endif:}: {:if field.field_type == \"int\" or field.field_type == \"integer\":}number{:else:}string{:endif:};",
          "{:endfor:}",
          "}",
          "",
        ].join("\n"),
      },
      { file_name: "README.md", content: "Tables: {:schema.tables.length:}\n{:code:}print(scope.schema.tables.map((t) => t.table_name).join(' + ')){:codeend:}" },
    ],
  });
  t.equal(template.status, 201, template.text);
  const templateId = template.body.template.id as number;

  const executed = await api.post(`/api/projects/${projectId}/templates/${templateId}/execute`, { schema: schemaId, namespace: "Blog Api" });
  t.equal(executed.status, 200, executed.text);
  const files = executed.body.files as Record<string, string>;
  t.same(Object.keys(files).sort(), ["README.md", "src/blog-api/BlogPost.ts", "src/blog-api/User.ts"]);
  t.equal(executed.body.output, "Models for blog: Users, BlogPosts".replace("Users, BlogPosts", "User, BlogPost"));
  t.match(files["src/blog-api/BlogPost.ts"], /export interface BlogPost \{\n {2}id: number;\n {2}userId: number;\n {2}title: string;\n {2}body\?: string;\n\}/);
  t.match(files["README.md"], /Tables: 2\nusers \+ blog_posts/);
  const generationId = executed.body.code_generation_id as number;

  const download = await fetch(`${app.url}/api/archives/${generationId}/download`, { headers: { authorization: `Bearer ${verified.body.access_token}` } });
  t.equal(download.status, 200, download.status === 200 ? "" : await download.clone().text());
  t.equal(download.headers.get("content-type"), "application/zip");
  t.match(download.headers.get("content-disposition"), /^attachment; filename="Models-\d+\.zip"$/);
  const zip = Buffer.from(await download.arrayBuffer());
  t.equal(Number(download.headers.get("content-length")), zip.length);
  const entries = await extractToMemory(zip);
  t.same(Object.fromEntries(entries.map((e) => [e.path, e.content.toString("utf8")])), files, "the zip holds exactly the executed files");

  if (await hasUnzip()) {
    const dir = await mkdtemp(path.join(tmpdir(), "generation-"));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, "out.zip");
    await writeFile(file, zip);
    const tested = await run("unzip", ["-t", file]);
    t.match(tested.stdout, /No errors detected/);
    const listed = await run("unzip", ["-Z1", file]);
    t.same(listed.stdout.trim().split("\n").sort(), Object.keys(files).sort());
  } else {
    t.comment("system unzip not available: skipped the unzip -t check");
  }

  const generation = await api.get(`/api/code-generations/${generationId}`);
  t.equal(generation.status, 200, generation.text);
  t.equal(generation.body.code_generation.file_count, 3);
  t.equal(generation.body.code_generation.schema_id, schemaId);
  t.equal(generation.body.code_generation.template.id, templateId);
  const archive = generation.body.code_generation.archive;
  t.match(archive, {
    id: Number,
    code_generation_id: generationId,
    file_path: /filename="([^"]+)"/.exec(download.headers.get("content-disposition") ?? "")?.[1],
    file_size: zip.length,
    status: "ready",
    download_url: `/api/archives/${generationId}/download`,
  }, "the spec's Project archive: the file name and size of the zip just downloaded");
  t.ok(Date.parse(archive.created_at) <= Date.now() && Date.parse(archive.expires_at) > Date.now(), "created, and expiring later");
});
