import { createHash } from "node:crypto";
import sharp from "sharp";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { buildSchema, buildTemplate } from "../../support/templateFactories.ts";

const png = () => sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();

t.test("project forms and reports", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const projectId = await buildProject(app.pool, owner.user.id);
  await buildTeam(app.pool, owner.user.id, { [viewer.user.id]: 4 }, [projectId]);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id);
  const base = `/api/projects/${projectId}`;

  let formId = 0;
  let reportId = 0;
  let imageId = 0;

  await t.test("a form binds a table, lists its fields and places them", async (t) => {
    const bad = await api.post(`${base}/forms`, { name: "Users", schema_id: schemaId, table_name: "accounts" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.table_name);
    const res = await api.post(`${base}/forms`, { name: "Users", description: "Edit a user", schema_id: schemaId, table_name: "users" });
    t.equal(res.status, 201, res.text);
    formId = res.body.form.id;
    t.match(res.body.form, { name: "Users", table_name: "users", schema_id: schemaId, fields: [], layout: { items: [] } });
    const added = await api.post(`${base}/forms/${formId}/fields`, { field_name: "email", label: "E-mail" });
    t.equal(added.status, 201, added.text);
    t.match(added.body.field, { field_name: "email", label: "E-mail", position: 0 });
    t.equal((await api.post(`${base}/forms/${formId}/fields`, { field_name: "title" })).status, 422, "a field of another table");
    t.equal((await api.post(`${base}/forms/${formId}/fields`, { field_name: "email" })).status, 422, "already on the form");
    const idField = (await api.post(`${base}/forms/${formId}/fields`, { field_name: "id" })).body.field;
    t.equal(idField.label, "id", "the label defaults to the name");

    const layout = { width: 400, height: 300, items: [{ field_name: "email", x: 10, y: 10, width: 200, height: 24 }, { field_name: "id", x: 10, y: 40, width: 80, height: 24 }] };
    const saved = await api.put(`${base}/forms/${formId}/layout`, layout);
    t.equal(saved.status, 200, saved.text);
    t.same((await api.get(`${base}/forms/${formId}/layout`)).body.layout, layout);
    const outside = await api.put(`${base}/forms/${formId}/layout`, { ...layout, items: [{ field_name: "email", x: 300, y: 0, width: 200, height: 24 }] });
    t.equal(outside.status, 422);
    const unknown = await api.put(`${base}/forms/${formId}/layout`, { ...layout, items: [{ field_name: "posts", x: 0, y: 0, width: 20, height: 24 }] });
    t.ok(unknown.body.errors["items.0.field_name"]);
    const removed = await api.delete(`${base}/forms/${formId}/fields/${idField.id}`);
    t.equal(removed.status, 200, removed.text);
    t.same(removed.body.form.layout.items.map((i: { field_name: string }) => i.field_name), ["email"], "its layout items go with it");
    t.equal((await api.delete(`${base}/forms/${formId}/fields/${idField.id}`)).status, 404);
  });

  await t.test("a report: layout bands, pattern, images", async (t) => {
    const res = await api.post(`${base}/reports`, { name: "Posts", schema_id: schemaId, table_name: "posts" });
    t.equal(res.status, 201, res.text);
    reportId = res.body.report.id;
    t.match(res.body.report.layout.bands, { header: { items: [] }, detail: { items: [] }, footer: { items: [] } });
    const form = new FormData();
    form.append("image", new Blob([new Uint8Array(await png())], { type: "image/png" }), "logo.png");
    const uploaded = await request(app.url, "POST", `${base}/reports/${reportId}/images`, { token: owner.token, body: form, raw: true });
    t.equal(uploaded.status, 201, uploaded.text);
    t.match(uploaded.body.image, { report_id: reportId, content_type: "image/png", width: 40, height: 30 });
    imageId = uploaded.body.image.id;
    const svg = new FormData();
    svg.append("image", new Blob(['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'], { type: "image/svg+xml" }), "x.svg");
    const refused = await request(app.url, "POST", `${base}/reports/${reportId}/images`, { token: owner.token, body: svg, raw: true });
    t.equal(refused.status, 422);
    t.equal(refused.body.code, "image_svg");

    const layout = {
      page_width: 800,
      bands: {
        header: { height: 60, items: [{ type: "text", x: 0, y: 0, width: 300, height: 30, text: "All posts" }, { type: "image", x: 700, y: 0, width: 40, height: 30, image_id: imageId }] },
        detail: { height: 24, items: [{ type: "field", x: 0, y: 0, width: 400, height: 24, field_name: "title" }] },
        footer: { height: 40, items: [{ type: "line", x: 0, y: 0, width: 800, height: 1 }] },
      },
    };
    const saved = await api.put(`${base}/reports/${reportId}/layout`, layout);
    t.equal(saved.status, 200, saved.text);
    t.same((await api.get(`${base}/reports/${reportId}/layout`)).body.layout, layout);
    const wrong = await api.put(`${base}/reports/${reportId}/layout`, {
      ...layout,
      bands: { ...layout.bands, detail: { height: 24, items: [{ type: "field", x: 0, y: 10, width: 100, height: 24, field_name: "email" }, { type: "image", x: 0, y: 0, width: 1, height: 1, image_id: 999999 }] } },
    });
    t.equal(wrong.status, 422);
    t.same(Object.keys(wrong.body.errors).sort(), ["bands.detail.items.0.field_name", "bands.detail.items.0.y", "bands.detail.items.1.image_id"]);
    t.equal((await api.put(`${base}/reports/${reportId}/layout`, { bands: { header: { height: 1, items: [{ type: "text", x: 0, y: 0, width: 1, height: 1 }] } } })).status, 422, "a text item needs its text; every band is there");

    const pattern = { group_by: ["user_id"], sort_by: [{ field_name: "title", direction: "desc" }] };
    t.equal((await api.put(`${base}/reports/${reportId}/pattern`, pattern)).status, 200);
    t.same((await api.get(`${base}/reports/${reportId}/pattern`)).body.pattern, pattern);
    const badPattern = await api.put(`${base}/reports/${reportId}/pattern`, { group_by: ["email", "title", "title"], sort_by: [] });
    t.same(Object.keys(badPattern.body.errors).sort(), ["group_by.0", "group_by.2"]);
  });

  await t.test("counts, reads by the team, refusals; the project lock holds (423) and nothing is written", async (t) => {
    const project = (await api.get(base)).body.project;
    t.match(project, { forms_count: 1, reports_count: 1 });
    const view = client(app.url, viewer.token);
    t.equal((await view.get(`${base}/forms`)).body.data.length, 1, "a viewer reads");
    t.equal((await view.get(`${base}/reports/${reportId}`)).status, 200);
    t.equal((await view.post(`${base}/forms`, { name: "Mine", schema_id: schemaId, table_name: "users" })).status, 403, "but does not write");
    t.equal((await view.put(`${base}/reports/${reportId}/pattern`, { group_by: [], sort_by: [] })).status, 403);
    const other = client(app.url, stranger.token);
    t.equal((await other.get(`${base}/forms/${formId}`)).status, 404);
    t.equal((await other.delete(`${base}/reports/${reportId}/images/${imageId}`)).status, 404);

    await api.post(`${base}/lock`);
    const before = await app.pool.oneFirst(sql.type(z.object({ s: z.string() }))`
      select (select string_agg(layout::text || updated_at::text, '|') from project_forms) || (select string_agg(pattern::text || layout::text, '|') from project_reports) as s`);
    const writes = [
      api.post(`${base}/forms`, { name: "Locked", schema_id: schemaId, table_name: "users" }),
      api.put(`${base}/forms/${formId}`, { name: "Locked" }),
      api.post(`${base}/forms/${formId}/fields`, { field_name: "id" }),
      api.put(`${base}/forms/${formId}/layout`, { items: [] }),
      api.delete(`${base}/forms/${formId}`),
      api.put(`${base}/reports/${reportId}/pattern`, { group_by: [], sort_by: [] }),
      api.put(`${base}/reports/${reportId}/layout`, { bands: { header: { height: 1, items: [] }, detail: { height: 1, items: [] }, footer: { height: 1, items: [] } } }),
      api.delete(`${base}/reports/${reportId}/images/${imageId}`),
      api.delete(`${base}/reports/${reportId}`),
    ];
    for (const res of await Promise.all(writes)) {
      t.equal(res.status, 423, res.text);
      t.equal(res.body.code, "project_locked");
    }
    const after = await app.pool.oneFirst(sql.type(z.object({ s: z.string() }))`
      select (select string_agg(layout::text || updated_at::text, '|') from project_forms) || (select string_agg(pattern::text || layout::text, '|') from project_reports) as s`);
    t.equal(after, before, "nothing changed");
    t.equal((await api.get(`${base}/forms/${formId}`)).status, 200, "reads still work");
    await api.post(`${base}/unlock`);
  });

  await t.test("templates see forms and reports in their scope", async (t) => {
    const template = await buildTemplate(app.pool, { projectId }, owner.user.id, {
      content: "{:for form in forms:}{:form.name:}:{:form.table_name:}:{:for f in form.fields:}{:f.field_name:}/{:f.label:}{:endfor:};{:endfor:}{:for r in reports:}{:r.name:} by {:r.pattern.group_by|json:} {:r.layout.bands.detail.items|json:}{:endfor:}",
      variables: [],
      files: [],
    });
    const res = await api.post(`${base}/templates/${template}/preview`, {});
    t.equal(res.status, 200, res.text);
    t.equal(res.body.preview, 'Users:users:email/E-mail;Posts by ["user_id"] [{"type":"field","x":0,"y":0,"width":400,"height":24,"field_name":"title"}]');
  });

  await t.test("an image downloads for whoever reads the report: its bytes, safe headers, ETag 304", async (t) => {
    const path = `${base}/reports/${reportId}/images/${imageId}`;
    const stored = (await api.get(`${base}/reports/${reportId}`)).body.report.images[0];
    for (const token of [owner.token, viewer.token]) {
      const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      t.equal(res.status, 200);
      const bytes = Buffer.from(await res.arrayBuffer());
      t.equal(bytes.length, stored.size);
      t.equal(createHash("sha256").update(bytes).digest("hex"), stored.sha256, "the stored bytes");
      t.equal((await sharp(bytes).metadata()).format, "png");
      t.match(Object.fromEntries(res.headers), {
        "content-type": "image/png", "x-content-type-options": "nosniff", "content-security-policy": /default-src 'none'/, etag: `"${stored.sha256}"`,
        "cache-control": /private/, "content-disposition": `inline; filename="report-${reportId}-image-${imageId}.png"`,
      });
    }
    const again = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${owner.token}`, "if-none-match": `"${stored.sha256}"` } });
    t.equal(again.status, 304);
    const attachment = await fetch(`${app.url}${path}?download=1`, { headers: { authorization: `Bearer ${owner.token}` } });
    t.match(attachment.headers.get("content-disposition"), /^attachment;/);
    t.equal((await fetch(`${app.url}${path}`)).status, 401, "a token is needed");
    t.equal((await request(app.url, "GET", path, { token: stranger.token })).status, 404, "a stranger sees nothing");
    t.equal((await api.get(`${base}/reports/${reportId}/images/${imageId + 1000}`)).status, 404);
    t.equal((await api.get(`${base}/reports/${reportId}/images/abc`)).status, 404, "a path that names no image");
  });

  await t.test("export and import carry forms and reports with their images", async (t) => {
    const bundle = (await api.get(`${base}/export`)).body;
    t.equal(bundle.sections.forms.length, 1);
    t.equal(bundle.sections.reports.length, 1);
    const original = (await api.get(`${base}/reports/${reportId}`)).body.report.images[0];
    t.match(bundle.sections.reports[0].images, [{ id: imageId, content_type: "image/png", data: /^[A-Za-z0-9+/]+=*$/ }]);
    const imported = await api.post("/api/projects/import", bundle);
    t.equal(imported.status, 201, imported.text);
    const copy = imported.body.project;
    t.match(copy, { forms_count: 1, reports_count: 1 });
    const forms = (await api.get(`/api/projects/${copy.id}/forms`)).body.data;
    t.match(forms[0], { name: "Users", table_name: "users", fields: [{ field_name: "email", label: "E-mail" }], layout: { items: [{ field_name: "email" }] } });
    t.not(forms[0].schema_id, schemaId, "bound to the imported schema");
    const reports = (await api.get(`/api/projects/${copy.id}/reports`)).body.data;
    t.same(reports[0].pattern, { group_by: ["user_id"], sort_by: [{ field_name: "title", direction: "desc" }] });
    t.match(reports[0].images, [{ content_type: "image/png", width: 40, height: 30, sha256: original.sha256 }], "the image came along");
    const copied = reports[0].images[0].id;
    t.not(copied, imageId);
    t.same(reports[0].layout.bands.header.items.map((i: { type: string; image_id?: number }) => [i.type, i.image_id]), [["text", undefined], ["image", copied]], "the layout shows the new image");
    const downloaded = await fetch(`${app.url}/api/projects/${copy.id}/reports/${reports[0].id}/images/${copied}`, { headers: { authorization: `Bearer ${owner.token}` } });
    t.equal(createHash("sha256").update(Buffer.from(await downloaded.arrayBuffer())).digest("hex"), original.sha256);

    // An older bundle without images, and one whose image is not an image.
    const withoutImages = structuredClone(bundle);
    delete withoutImages.sections.reports[0].images;
    const older = await api.post("/api/projects/import", withoutImages);
    t.equal(older.status, 201, older.text);
    const olderReport = (await api.get(`/api/projects/${older.body.project.id}/reports`)).body.data[0];
    t.same(olderReport.images, []);
    t.same(olderReport.layout.bands.header.items.map((i: { type: string }) => i.type), ["text"], "an item of an image the bundle lacks is dropped");
    const script = structuredClone(bundle);
    script.sections.reports[0].images[0].data = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString("base64");
    const before = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from stored_files where key like 'media/reports/%'`);
    const refused = await api.post("/api/projects/import", script);
    t.equal(refused.status, 422);
    t.ok(refused.body.errors["sections.reports.0.images.0.data"], refused.text);
    const checked = await api.post("/api/projects/import/validate", script);
    t.match(checked.body, { valid: false, errors: { "sections.reports.0.images.0.data": [/./] } });
    t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from stored_files where key like 'media/reports/%'`), before, "nothing stored");
  });

  await t.test("deleting an image drops its layout items; deleting a report its stored files", async (t) => {
    const res = await api.delete(`${base}/reports/${reportId}/images/${imageId}`);
    t.equal(res.status, 200, res.text);
    const report = (await api.get(`${base}/reports/${reportId}`)).body.report;
    t.same(report.images, []);
    t.same(report.layout.bands.header.items.map((i: { type: string }) => i.type), ["text"]);
    const keys = () => app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`select key from stored_files where key like ${`media/reports/${reportId}/%`}`);
    t.same(await keys(), []);
    t.equal((await api.delete(`${base}/forms/${formId}`)).status, 200);
    t.equal((await api.delete(`${base}/reports/${reportId}`)).status, 200);
    t.match((await api.get(base)).body.project, { forms_count: 0, reports_count: 0 });
  });
});
