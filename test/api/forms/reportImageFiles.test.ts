/**
 * A report's images leave storage with the report however it goes: deleted on its route, or
 * by a cascade (its schema deleted takes the reports bound to it). The stored files of images
 * deleted by a cascade are listed for the media sweep like other media.
 */
import sharp from "sharp";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { sweepMediaGarbage } from "../../../shared/media/garbage.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { buildSchema } from "../../support/templateFactories.ts";

const png = () => sharp({ create: { width: 20, height: 10, channels: 3, background: { r: 10, g: 200, b: 10 } } }).png().toBuffer();

t.test("report images of a report deleted with its schema", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const projectId = await buildProject(app.pool, owner.user.id);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id);
  const base = `/api/projects/${projectId}`;
  const report = await api.post(`${base}/reports`, { name: "Posts", schema_id: schemaId, table_name: "posts" });
  t.equal(report.status, 201, report.text);
  const keys = async () =>
    app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`select key from stored_files where key like ${`media/reports/${report.body.report.id}/%`}`);
  for (let i = 0; i < 2; i += 1) {
    const form = new FormData();
    form.append("image", new Blob([new Uint8Array(await png())], { type: "image/png" }), "logo.png");
    const uploaded = await request(app.url, "POST", `${base}/reports/${report.body.report.id}/images`, { token: owner.token, body: form, raw: true });
    t.equal(uploaded.status, 201, uploaded.text);
  }
  t.equal((await keys()).length, 2, "two files stored");

  const deleted = await api.delete(`${base}/schemas/${schemaId}`);
  t.equal(deleted.status, 200, deleted.text);
  t.equal((await api.get(`${base}/reports/${report.body.report.id}`)).status, 404, "the report went with its schema");
  t.equal(await sweepMediaGarbage(app.pool, app.deps.storage), 2, "its files were listed for the sweep");
  t.same(await keys(), [], "and are gone from storage");
});
