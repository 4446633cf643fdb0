/**
 * Template media through the API: images uploaded as multipart, checked by content and
 * re-encoded; HTML and script-bearing SVG refused; the public read without a token, with
 * nosniff, a sandboxing CSP, caching headers and ETag revalidation (304); videos as links;
 * the logo replaced; deletion (storage cleared by the media sweep, also after a template is
 * deleted); who may do what.
 */
import sharp from "sharp";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { sweepMediaGarbage } from "../../../shared/media/garbage.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

const png = (width = 64, height = 48) => sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();

t.test("template media", async (t) => {
  const app = await startTestApp(t, { env: { MEDIA_MAX_BYTES: String(200 * 1024) } });
  const { user, token } = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  await buildTeam(app.pool, user.id, { [viewer.user.id]: 4 }, [project]);
  const template = await buildTemplate(app.pool, { projectId: project }, user.id);
  const base = `/api/projects/${project}/templates/${template}/media`;

  /** POSTs a multipart form to the media route. */
  const upload = async (fields: Record<string, string>, file?: { bytes: Buffer; name: string; type?: string }, as = token) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (file) form.append("file", new Blob([new Uint8Array(file.bytes)], { type: file.type ?? "application/octet-stream" }), file.name);
    return request(app.url, "POST", base, { token: as, body: form, raw: true });
  };
  const storedKeys = async () =>
    app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`select key from stored_files where key like 'media/%' order by key`);

  let imageId = 0;
  let imagePath = "";
  await t.test("an image is stored, re-encoded, and served publicly with caching headers", async (t) => {
    const input = await sharp(await png()).withExif({ IFD0: { Make: "SecretCam" } }).jpeg().toBuffer();
    const res = await upload({ media_type: "image", title: "Screenshot" }, { bytes: input, name: "shot.jpg", type: "image/jpeg" });
    t.equal(res.status, 201, res.text);
    t.match(res.body.media, { template_id: template, media_type: "image", title: "Screenshot", content_type: "image/jpeg", width: 64, height: 48, video_url: null });
    imageId = res.body.media.id;
    imagePath = res.body.media.file_path;
    t.match(imagePath, new RegExp(`^/api/template-media/${imageId}\\?v=[0-9a-f]{16}$`));
    t.equal(res.body.media.url, `${app.url}${imagePath}`);

    const served = await fetch(`${app.url}${imagePath}`);
    t.equal(served.status, 200, "no token needed");
    const bytes = Buffer.from(await served.arrayBuffer());
    t.equal(served.headers.get("content-type"), "image/jpeg");
    t.equal(served.headers.get("x-content-type-options"), "nosniff");
    t.match(served.headers.get("content-security-policy"), /default-src 'none'.*sandbox/);
    t.equal(served.headers.get("cache-control"), "public, max-age=31536000, immutable");
    t.equal(Number(served.headers.get("content-length")), bytes.length);
    t.match(served.headers.get("etag"), /^"[0-9a-f]{64}"$/);
    t.notOk(bytes.includes("SecretCam"), "EXIF is not served");
    t.equal((await sharp(bytes).metadata()).format, "jpeg");

    const revalidated = await fetch(`${app.url}/api/template-media/${imageId}`, { headers: { "if-none-match": served.headers.get("etag")! } });
    t.equal(revalidated.status, 304, "the same ETag: not modified");
    t.equal((await revalidated.arrayBuffer()).byteLength, 0);
    const changed = await fetch(`${app.url}/api/template-media/${imageId}`, { headers: { "if-none-match": '"0000"' } });
    t.equal(changed.status, 200, "another ETag: the image");
    await changed.arrayBuffer();
  });

  await t.test("HTML, SVG with a script, and a PNG signature over HTML are refused; nothing is stored", async (t) => {
    const before = await storedKeys();
    const html = await upload({}, { bytes: Buffer.from("<!doctype html><script>alert(document.cookie)</script>"), name: "logo.png", type: "image/png" });
    t.equal(html.status, 422);
    t.match(html.body, { code: "image_type", errors: { file: [/not an image/] } });
    const svg = await upload(
      { media_type: "logo" },
      { bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'), name: "logo.svg", type: "image/svg+xml" },
    );
    t.equal(svg.status, 422);
    t.match(svg.body, { code: "image_svg", errors: { file: [/SVG images are not accepted/] } });
    const disguised = await upload({}, { bytes: Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.from("<html><script>x</script>")]), name: "a.png" });
    t.equal(disguised.status, 422);
    t.equal(disguised.body.code, "image_unreadable");
    const big = await upload({}, { bytes: Buffer.alloc(300 * 1024, 1), name: "big.png" });
    t.equal(big.status, 422);
    t.match(big.body, { code: "image_too_large", errors: { file: [/at most 200 KB/] } });
    t.same(await storedKeys(), before, "no file was stored");
  });

  await t.test("validation of the form", async (t) => {
    t.match((await upload({ media_type: "image" })).body, { code: "validation_failed", errors: { file: [/must be an image file/] } });
    t.match((await upload({ media_type: "poster" }, { bytes: await png(), name: "a.png" })).body, { errors: { media_type: [/./] } });
    t.match((await upload({ media_type: "video" })).body, { errors: { video_url: [/required for a video/] } });
    t.match((await upload({ media_type: "video", video_url: "javascript:alert(1)" })).body, { errors: { video_url: [/http\(s\) URL/] } });
    t.match((await upload({ media_type: "image", video_url: "https://videos.example/1" }, { bytes: await png(), name: "a.png" })).body, { errors: { video_url: [/only for media_type video/] } });
    t.match((await upload({ title: "x".repeat(256) }, { bytes: await png(), name: "a.png" })).body, { errors: { title: [/./] } });
  });

  await t.test("a video is a link and is not served", async (t) => {
    const res = await upload({ media_type: "video", video_url: "https://videos.example/watch?v=42", title: "Tour" });
    t.equal(res.status, 201, res.text);
    t.match(res.body.media, { media_type: "video", video_url: "https://videos.example/watch?v=42", file_path: null, url: null });
    t.equal((await request(app.url, "GET", `/api/template-media/${res.body.media.id}`)).status, 404);
  });

  await t.test("a new logo replaces the previous one, whose file the sweep removes", async (t) => {
    const first = await upload({ media_type: "logo" }, { bytes: await png(32, 32), name: "logo.png" });
    t.equal(first.status, 201, first.text);
    const second = await upload({ media_type: "logo" }, { bytes: await png(16, 16), name: "logo.png" });
    t.equal(second.status, 201, second.text);
    const list = await request(app.url, "GET", base, { token: viewer.token });
    t.equal(list.status, 200);
    t.same(
      list.body.data.map((m: { id: number; media_type: string }) => [m.id, m.media_type]),
      [[second.body.media.id, "logo"], [imageId, "image"], [list.body.data[2].id, "video"]],
      "logo first, the old logo gone",
    );
    t.equal((await request(app.url, "GET", `/api/template-media/${first.body.media.id}`)).status, 404);
    const keys = await storedKeys();
    t.equal(await sweepMediaGarbage(app.pool, app.deps.storage), 1);
    t.equal((await storedKeys()).length, keys.length - 1, "the old logo's file is gone");
  });

  await t.test("who may upload, list and delete", async (t) => {
    t.equal((await upload({}, { bytes: await png(), name: "a.png" }, viewer.token)).status, 403, "a viewer may not upload");
    t.equal((await upload({}, { bytes: await png(), name: "a.png" }, stranger.token)).status, 404, "a stranger sees no template");
    t.equal((await request(app.url, "POST", base, { body: new FormData(), raw: true })).status, 401);
    t.equal((await request(app.url, "GET", base, { token: stranger.token })).status, 404);
    t.equal((await request(app.url, "DELETE", `/api/template-media/${imageId}`, { token: stranger.token })).status, 404);
    t.equal((await request(app.url, "DELETE", `/api/template-media/${imageId}`, { token: viewer.token })).status, 403);
    t.equal((await request(app.url, "DELETE", `/api/template-media/${imageId}`)).status, 401);
    const deleted = await request(app.url, "DELETE", `/api/template-media/${imageId}`, { token });
    t.equal(deleted.status, 200, deleted.text);
    t.equal((await request(app.url, "GET", imagePath)).status, 404, "no longer served");
    t.equal((await request(app.url, "DELETE", `/api/template-media/${imageId}`, { token })).status, 404);
  });

  await t.test("deleting the template leaves its files to the sweep", async (t) => {
    const other = await buildTemplate(app.pool, { projectId: project }, user.id, { name: "Other" });
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(await png())]), "a.png");
    const res = await request(app.url, "POST", `/api/projects/${project}/templates/${other}/media`, { token, body: form, raw: true });
    t.equal(res.status, 201, res.text);
    t.equal(await sweepMediaGarbage(app.pool, app.deps.storage), 1, "the image deleted above");
    const keys = await storedKeys();
    t.equal((await request(app.url, "DELETE", `/api/projects/${project}/templates/${other}`, { token })).status, 200);
    t.equal((await request(app.url, "GET", res.body.media.file_path)).status, 404);
    t.equal(await sweepMediaGarbage(app.pool, app.deps.storage), 1);
    t.equal((await storedKeys()).length, keys.length - 1);
    t.equal(await sweepMediaGarbage(app.pool, app.deps.storage), 0, "nothing left to sweep");
  });
});
