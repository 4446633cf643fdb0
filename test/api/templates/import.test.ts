/**
 * Template zips through HTTP: import (layouts, every refusal with its key, nothing written
 * on a refusal, authorization), running an imported template, and export → import.
 */
import { randomBytes } from "node:crypto";
import { buffer } from "node:stream/consumers";
import t from "tap";
import { z } from "zod";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { sql } from "../../../shared/db/pool.ts";
import { craftZip } from "../../shared/archive/support/craft.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client, type ApiResponse } from "../../support/http.ts";

const count = z.object({ count: z.number() });

/** A zip of `entries` (path → content) made by the service's own writer. */
async function zipOf(entries: Record<string, string | Buffer>): Promise<Buffer> {
  return buffer(createZipStream(Object.entries(entries).map(([path, content]) => ({ path, content }))));
}

/** A zip with a template.json of `manifest` and the given files/ entries. */
const templateZip = (manifest: unknown, files: Record<string, string | Buffer> = {}, prefix = "") =>
  zipOf({
    [`${prefix}template.json`]: typeof manifest === "string" ? manifest : JSON.stringify(manifest),
    ...Object.fromEntries(Object.entries(files).map(([path, content]) => [`${prefix}files/${path}`, content])),
  });

const entityManifest = {
  name: "Entity",
  description: "A class per entity",
  engine_type: "ultimate",
  content: "Entity {:entity|pascal:}",
  variables: [
    { name: "entity", type: "string", required: true, description: "The entity's name" },
    { name: "fields", type: "list", default_value: ["id", "name"] },
  ],
  files: [
    { file_name: "src/{:entity|pascal:}.ts", order: 1 },
    { file_name: "README.md", order: 0 },
    { file_name: "tests/{:entity|kebab:}.test.ts", source: "test.ts.tpl", order: 2 },
  ],
};
const entityFiles = {
  "src/{:entity|pascal:}.ts": "export class {:entity|pascal:} {\n{:for f in fields:}\n  {:f:}: string;\n{:endfor:}\n}\n",
  "README.md": "# {:entity:}\n",
  "test.ts.tpl": "import { {:entity|pascal:} } from \"../src/{:entity|pascal:}.ts\";\n",
};

t.test("template import", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = await buildProject(app.pool, owner.user.id);
  const templates = () => app.pool.oneFirst(sql.type(count)`select count(*)::int as count from templates`);

  async function upload(zip: Buffer, options: { token?: string; projectId?: number; field?: string } = {}): Promise<ApiResponse> {
    const form = new FormData();
    form.set(options.field ?? "file", new Blob([new Uint8Array(zip)], { type: "application/zip" }), "template.zip");
    const res = await fetch(`${app.url}/api/projects/${options.projectId ?? project}/templates/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${options.token ?? owner.token}`, accept: "application/json" },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  }

  t.test("a valid zip creates the template; read and execute show its variables and files", async (t) => {
    const res = await upload(await templateZip(entityManifest, entityFiles));
    t.equal(res.status, 201, res.text);
    t.equal(res.body.message, "Template imported.");
    const imported = res.body.template;
    t.match(imported, { project_id: project, name: "Entity", description: "A class per entity", engine_type: "ultimate", content: "Entity {:entity|pascal:}" });

    const read = await api.get(`/api/projects/${project}/templates/${imported.id}`);
    t.equal(read.status, 200);
    t.same(read.body.template, imported, "answered exactly as the single read");
    t.same(
      read.body.template.variables.map((v: Record<string, unknown>) => [v.name, v.type, v.required, v.default_value, v.description, v.position]),
      [
        ["entity", "string", true, null, "The entity's name", 0],
        ["fields", "list", false, ["id", "name"], "", 1],
      ],
    );
    t.same(
      read.body.template.files.map((f: Record<string, unknown>) => [f.file_name, f.order, f.repeat]),
      [
        ["README.md", 0, null],
        ["src/{:entity|pascal:}.ts", 1, null],
        ["tests/{:entity|kebab:}.test.ts", 2, null],
      ],
    );
    t.equal(read.body.template.files[2].content, entityFiles["test.ts.tpl"], "a source entry gives the content");

    const run = await api.post(`/api/projects/${project}/templates/${imported.id}/execute`, { entity: "blog post" });
    t.equal(run.status, 200, run.text);
    t.equal(run.body.output, "Entity BlogPost");
    t.same(run.body.files, {
      "README.md": "# blog post\n",
      "src/BlogPost.ts": "export class BlogPost {\n  id: string;\n  name: string;\n}\n",
      "tests/blog-post.test.ts": 'import { BlogPost } from "../src/BlogPost.ts";\n',
    });
  });

  t.test("layouts: one top-level folder (OS clutter ignored); files listed by the folder when the manifest has none", async (t) => {
    const wrapped = await zipOf({
      "entity-template/template.json": JSON.stringify(entityManifest),
      ...Object.fromEntries(Object.entries(entityFiles).map(([p, c]) => [`entity-template/files/${p}`, c])),
      "entity-template/files/.DS_Store": Buffer.from([0, 1, 2, 0xff]),
      "__MACOSX/entity-template/._template.json": Buffer.from([0, 5, 0xff]),
    });
    const res = await upload(wrapped);
    t.equal(res.status, 201, res.text);
    t.equal(res.body.template.files.length, 3);

    const byFolder = await upload(await templateZip({ name: "Folder" }, { "b.txt": "B", "a/{:x:}.txt": "A {:x:}" }));
    t.equal(byFolder.status, 201, byFolder.text);
    t.same(
      byFolder.body.template.files.map((f: Record<string, unknown>) => [f.file_name, f.content, f.order]),
      [
        ["a/{:x:}.txt", "A {:x:}", 0],
        ["b.txt", "B", 1],
      ],
    );
  });

  t.test("a name already used in the project is allowed, as for create", async (t) => {
    const first = await upload(await templateZip({ name: "Twice" }));
    const second = await upload(await templateZip({ name: "Twice" }));
    t.same([first.status, second.status], [201, 201]);
    t.not(first.body.template.id, second.body.template.id);
  });

  t.test("refusals: 422 keyed by entry or field, nothing written", async (t) => {
    const random = (n: number) => randomBytes(n);
    const manyEntries: Record<string, string> = { "template.json": '{"name":"Many"}' };
    for (let i = 0; i < 1100; i++) manyEntries[`files/f${i}.txt`] = "x";
    const cases: { name: string; zip: Buffer | Promise<Buffer>; key: string; code?: string; match?: RegExp }[] = [
      { name: "not a zip", zip: Buffer.from("hello, this is text"), key: "file", code: "archive_corrupt" },
      { name: "zip bomb (ratio)", zip: templateZip({ name: "B" }, { "big.txt": Buffer.alloc(4 * 1024 * 1024, 0x20) }), key: "files/big.txt", code: "archive_ratio_exceeded" },
      { name: "too many entries", zip: zipOf(manyEntries), key: "file", code: "archive_too_many_entries" },
      {
        name: "an entry declaring too many bytes",
        zip: craftZip([{ name: "template.json", data: '{"name":"x"}' }, { name: "files/huge.txt", data: random(100 * 1024), deflate: true, declaredSize: 17 * 1024 * 1024 }]),
        key: "files/huge.txt",
        code: "archive_entry_too_large",
      },
      {
        name: "entries declaring too many bytes together",
        zip: craftZip(Array.from({ length: 5 }, (_, i) => ({ name: `files/part${i}.txt`, data: random(80 * 1024), deflate: true, declaredSize: 15 * 1024 * 1024 }))),
        key: "file",
        code: "archive_too_large",
      },
      { name: "path traversal", zip: craftZip([{ name: "template.json", data: '{"name":"x"}' }, { name: "files/../../evil.txt", data: "x" }]), key: "files/../../evil.txt", code: "archive_unsafe_path" },
      { name: "absolute entry", zip: craftZip([{ name: "template.json", data: '{"name":"x"}' }, { name: "/etc/passwd", data: "x" }]), key: "/etc/passwd", code: "archive_unsafe_path" },
      { name: "no template.json", zip: zipOf({ "files/a.txt": "a" }), key: "template.json", match: /no template\.json/ },
      { name: "template.json in one of two folders", zip: zipOf({ "a/template.json": '{"name":"x"}', "b/files/x.txt": "x" }), key: "template.json" },
      { name: "template.json not JSON", zip: templateZip("{name: oops"), key: "template.json", match: /not valid JSON/ },
      { name: "template.json not an object", zip: templateZip([1, 2]), key: "template.json", match: /JSON object/ },
      { name: "template.json not UTF-8", zip: zipOf({ "template.json": Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }), key: "template.json", match: /UTF-8/ },
      { name: "no name", zip: templateZip({ description: "d" }), key: "template.json: name" },
      { name: "unknown engine", zip: templateZip({ name: "x", engine_type: "handlebars" }), key: "template.json: engine_type" },
      { name: "unknown manifest version", zip: templateZip({ name: "x", version: 2 }), key: "template.json: version" },
      {
        name: "bad variable type",
        zip: templateZip({ name: "x", variables: [{ name: "a" }, { name: "b" }, { name: "c", type: "date" }] }),
        key: "template.json: variables.2.type",
      },
      { name: "bad variable name", zip: templateZip({ name: "x", variables: [{ name: "1a" }] }), key: "template.json: variables.0.name" },
      { name: "default of the wrong type", zip: templateZip({ name: "x", variables: [{ name: "n", type: "number", default_value: "ten" }] }), key: "template.json: variables.0.default_value" },
      { name: "duplicate variable", zip: templateZip({ name: "x", variables: [{ name: "a" }, { name: "a" }] }), key: "template.json: variables.1.name" },
      { name: "file named but absent", zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }] }), key: "template.json: files.0.file_name", match: /no entry files\/a\.txt/ },
      { name: "source absent", zip: templateZip({ name: "x", files: [{ file_name: "a.txt", source: "nope.tpl" }] }), key: "template.json: files.0.source" },
      {
        name: "duplicate file names",
        zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }, { file_name: "a.txt", source: "b.txt" }] }, { "a.txt": "a", "b.txt": "b" }),
        key: "template.json: files.1.file_name",
        match: /used twice/,
      },
      {
        name: "a file name that is no archive path, without source",
        zip: templateZip({ name: "x", files: [{ file_name: 'd/{:"a\\\\b":}.txt' }] }),
        key: "template.json: files.0.file_name",
        match: /source/,
      },
      {
        name: "a file name leaving the output folder",
        zip: templateZip({ name: "x", files: [{ file_name: "../{:a:}.txt", source: "a.txt" }] }, { "a.txt": "a" }),
        key: "template.json: files.0.file_name",
        match: /safe relative path/,
      },
      { name: "unknown filter in a file name", zip: templateZip({ name: "x", files: [{ file_name: "{:a|shout:}.txt", source: "a.txt" }] }, { "a.txt": "a" }), key: "template.json: files.0.file_name" },
      { name: "content inside the manifest", zip: templateZip({ name: "x", files: [{ file_name: "a.txt", content: "a" }] }, { "a.txt": "a" }), key: "template.json: files.0.content" },
      { name: "an entry the manifest does not list", zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }] }, { "a.txt": "a", "extra.txt": "e" }), key: "files/extra.txt" },
      { name: "non-UTF-8 file", zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }] }, { "a.txt": Buffer.from([0x61, 0xff, 0xfe]) }), key: "files/a.txt", match: /UTF-8/ },
      { name: "NUL in a file", zip: templateZip({ name: "x" }, { "a.txt": "a\u0000b" }), key: "files/a.txt", match: /NUL/ },
      { name: "NUL in the manifest", zip: templateZip({ name: "x", description: "a\u0000b" }), key: "template.json: description", match: /NUL/ },
      {
        name: "a default nested 5,000 levels deep",
        zip: templateZip(`{"name": "x", "variables": [{"name": "d", "type": "list", "default_value": ${"[".repeat(5000)}${"]".repeat(5000)}}]}`),
        key: "template.json: variables",
        match: /nested deeper than 64 levels/,
      },
      {
        name: "file content too long",
        zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }] }, { "a.txt": "x".repeat(1_000_001) }),
        key: "files/a.txt",
      },
      { name: "error keys inside one top-level folder", zip: templateZip({ name: "x", files: [{ file_name: "a.txt" }] }, {}, "tpl/"), key: "tpl/template.json: files.0.file_name" },
      { name: "syntax error in the content", zip: templateZip({ name: "x", content: "a\n{:if x:}" }), key: "(content):2:1", code: "template_error" },
      {
        name: "syntax error in a file",
        zip: templateZip({ name: "x", files: [{ file_name: "src/a.ts" }] }, { "src/a.ts": "ok\n  {:if x:}" }),
        key: "src/a.ts:2:3",
        code: "template_error",
      },
    ];
    const before = await templates();
    for (const c of cases) {
      const res = await upload(await c.zip);
      t.equal(res.status, 422, `${c.name}: 422 (${res.text.slice(0, 300)})`);
      t.ok(res.body?.errors?.[c.key], `${c.name}: keyed ${c.key} (${JSON.stringify(res.body?.errors)?.slice(0, 300)})`);
      t.equal(res.body?.code, c.code ?? "validation_failed", `${c.name}: code`);
      if (c.match) t.match(res.body?.errors?.[c.key]?.join(" "), c.match, `${c.name}: message`);
    }
    t.equal(await templates(), before, "nothing written by any refusal");

    const noFile = await upload(await templateZip({ name: "x" }), { field: "zip" });
    t.equal(noFile.status, 422);
    t.ok(noFile.body.errors.file, "no file field: keyed file");
    const json = await api.post(`/api/projects/${project}/templates/import`, { name: "x" });
    t.equal(json.status, 415, "a JSON body is not an upload");
    t.equal(await templates(), before);
  });

  t.test("authorization: viewer 403, stranger 404 (before the upload is read), locked 423, expired 402, archived 409", async (t) => {
    const viewer = await buildUserWithToken(app.pool);
    const member = await buildUserWithToken(app.pool);
    const stranger = await buildUserWithToken(app.pool);
    const shared = await buildProject(app.pool, owner.user.id);
    await buildTeam(app.pool, owner.user.id, { [viewer.user.id]: 4, [member.user.id]: 3 }, [shared]);
    const zip = await templateZip({ name: "Guarded" });
    const before = await templates();

    const asViewer = await upload(zip, { token: viewer.token, projectId: shared });
    t.same([asViewer.status, asViewer.body.code], [403, "forbidden"]);
    const asStranger = await upload(zip, { token: stranger.token, projectId: shared });
    t.same([asStranger.status, asStranger.body.code], [404, "not_found"]);
    const strangerJunk = await upload(Buffer.from("not a zip"), { token: stranger.token, projectId: shared });
    t.equal(strangerJunk.status, 404, "a stranger's upload is not even judged");
    t.equal((await upload(zip, { projectId: 987654321 })).status, 404, "unknown project");
    t.equal(await templates(), before);

    const asMember = await upload(zip, { token: member.token, projectId: shared });
    t.equal(asMember.status, 201, "a team member may import");

    const locked = await buildProject(app.pool, owner.user.id);
    t.equal((await api.post(`/api/projects/${locked}/lock`)).status, 200);
    const lockedRes = await upload(zip, { projectId: locked });
    t.same([lockedRes.status, lockedRes.body.code], [423, "project_locked"]);

    const expired = await buildProject(app.pool, owner.user.id);
    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${expired}`);
    t.equal((await upload(zip, { projectId: expired })).status, 402);

    const archived = await buildProject(app.pool, owner.user.id);
    t.equal((await api.post(`/api/projects/${archived}/archive`)).status, 200);
    t.equal((await upload(zip, { projectId: archived })).status, 409);
    t.equal(await templates(), before + 1, "only the member's import was written");
  });

  t.test("export → import gives the same template", async (t) => {
    const created = await api.post(`/api/projects/${project}/templates`, {
      name: "Round trip",
      description: "Everything a template holds",
      content: "{:for t in schema.tables:}{:t.name:} {:endfor:}",
      variables: [
        { name: "db", type: "schema", required: true },
        { name: "prefix", type: "string", default_value: "app", description: "Namespace" },
        { name: "options", type: "object", default_value: { soft_deletes: true } },
      ],
      files: [
        { file_name: "models/{:table.name|pascal:}.ts", content: "class {:table.name|pascal:} {}\n", repeat: "schema.tables", order: 2 },
        { file_name: 'notes/{:"a\\\\b":}.txt', content: "needs a source entry", order: 1 },
        { file_name: "_sources/file-1.txt", content: "a plain name that looks like a generated source", order: 3 },
        { file_name: "été.md", content: "ünïcödé ✓", order: 0 },
      ],
    });
    t.equal(created.status, 201, created.text);
    const original = created.body.template;

    const res = await fetch(`${app.url}/api/projects/${project}/templates/${original.id}/export`, { headers: { authorization: `Bearer ${owner.token}` } });
    t.equal(res.status, 200);
    t.equal(res.headers.get("content-type"), "application/zip");
    t.match(res.headers.get("content-disposition"), /attachment; filename="Round-trip\.zip"/);
    const zip = Buffer.from(await res.arrayBuffer());

    const entries = await extractToMemory(zip);
    t.same(entries.map((e) => e.path).sort(), ["files/_sources/file-1.txt", "files/_sources/file-2.txt", "files/models/{:table.name|pascal:}.ts", "files/été.md", "template.json"].sort());
    const manifest = JSON.parse(entries.find((e) => e.path === "template.json")!.content.toString());
    t.match(manifest, { version: 1, name: "Round trip", engine_type: "ultimate" });
    t.same(manifest.files.find((f: { file_name: string }) => f.file_name.startsWith("notes/")).source, "_sources/file-2.txt", "a name that is no path gets a source no other file uses");

    const imported = await upload(zip);
    t.equal(imported.status, 201, imported.text);
    const strip = (tpl: Record<string, any>) => ({
      ...tpl,
      id: 0,
      created_at: "",
      updated_at: "",
      variables: tpl.variables.map((v: Record<string, unknown>) => ({ ...v, id: 0 })),
      files: tpl.files.map((f: Record<string, unknown>) => ({ ...f, id: 0 })),
    });
    t.same(strip(imported.body.template), strip(original), "same fields, variables, files and contents");

    const stranger = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, stranger.token).get(`/api/projects/${project}/templates/${original.id}/export`)).status, 404);
  });
});
