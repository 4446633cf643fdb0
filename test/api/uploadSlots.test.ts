/**
 * One account's concurrent multipart uploads are capped per web process (UPLOADS_PER_USER):
 * past the cap an upload is refused with 429 `too_many_uploads` and `Retry-After` before its
 * body is spooled, and a slot comes back however its request ends: answered, refused by
 * validation, or cut off by the client mid-body.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import t from "tap";
import { UPLOAD_DIR_PREFIX } from "../../api/middleware/multipart.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

const boundary = "----upload-slots-boundary";

t.test("concurrent uploads per account are capped and every way of ending frees a slot", async (t) => {
  // A temp folder of this file's own, so its spooled uploads can be counted while other test files upload.
  const tmp = await mkdtemp(path.join(os.tmpdir(), "upload-slots-"));
  const previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  t.teardown(async () => {
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
    await rm(tmp, { recursive: true, force: true });
  });
  const app = await startTestApp(t, { env: { UPLOADS_PER_USER: "2" } });
  const owner = await buildUserWithToken(app.pool);
  const other = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  const template = await buildTemplate(app.pool, { projectId: project }, owner.user.id);
  const otherProject = await buildProject(app.pool, other.user.id);
  const otherTemplate = await buildTemplate(app.pool, { projectId: otherProject }, other.user.id);
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#0a78c8" } }).png().toBuffer();
  const mediaPath = (p: number, tpl: number) => `/api/projects/${p}/templates/${tpl}/media`;

  const upload = (token: string, p = project, tpl = template, mediaType = "image") => {
    const form = new FormData();
    form.append("media_type", mediaType);
    form.append("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "shot.png");
    return request(app.url, "POST", mediaPath(p, tpl), { token, body: form, raw: true });
  };
  const spooling = async () => (await readdir(tmp)).filter((name) => name.startsWith(UPLOAD_DIR_PREFIX)).length;

  /** An upload whose client sends the headers and part of the body, then stalls. */
  const stalled = async () => {
    const socket = net.connect(new URL(app.url).port ? Number(new URL(app.url).port) : 80, "127.0.0.1");
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    socket.on("error", () => {});
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
    socket.write(
      `POST ${mediaPath(project, template)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 5000000\r\n\r\n${head}`,
    );
    socket.write(Buffer.alloc(64 * 1024, 1));
    return socket;
  };

  const first = await stalled();
  const second = await stalled();
  await until(async () => (await spooling()) === 2, { message: "both stalled uploads to be spooling" });

  const refused = await upload(owner.token);
  t.equal(refused.status, 429, refused.text);
  t.equal(refused.body.code, "too_many_uploads");
  t.match(refused.body.message, /at most 2/);
  t.equal(refused.headers.get("retry-after"), "5");
  t.equal(await spooling(), 2, "the refused upload spooled nothing");
  t.equal((await upload(other.token, otherProject, otherTemplate)).status, 201, "another account uploads meanwhile");

  first.destroy();
  await until(async () => (await spooling()) === 1, { message: "the cut-off upload's folder to go" });
  const afterAbort = await until(async () => {
    const answer = await upload(owner.token);
    return answer.status === 429 ? null : answer;
  }, { message: "the cut-off upload's slot to come back" });
  t.equal(afterAbort.status, 201, "a dropped connection frees its slot");

  const invalid = await upload(owner.token, project, template, "bogus");
  t.equal(invalid.status, 422, "a refused body frees its slot");
  t.equal((await upload(owner.token)).status, 201, "and an answered one did too");

  second.destroy();
  await until(async () => (await spooling()) === 0, { message: "the second cut-off upload's folder to go" });
  const both = await until(async () => {
    const answers = await Promise.all([upload(owner.token), upload(owner.token)]);
    return answers.some((a) => a.status === 429) ? null : answers;
  }, { message: "both slots to be free" });
  t.same(both.map((a) => a.status), [201, 201], "with every upload over, the whole cap is free again");
});
