/**
 * Store template media: an image and a logo re-encoded and served publicly once the
 * template is published (not while it is a draft), SVG and non-images refused, video links
 * only to known hosts, the seller only, deletion.
 */
import pg from "pg";
import sharp from "sharp";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { MAX_STORE_MEDIA } from "../../../shared/store/media.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { untilWaitingOnLocks } from "../../support/lockWaits.ts";
import { buildSeller } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("store media", async (t) => {
  const app = await startTestApp(t);
  const seller = await buildSeller(app);
  const other = await buildUserWithToken(app.pool);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  const created = await request(app.url, "POST", "/api/store/templates", {
    token: seller.token,
    body: { name: "Kit", category: "Utilities", language: "Go", price_type: "free", template_ids: [template] },
  });
  const id = created.body.store_template.id;
  const upload = (fields: Record<string, string>, file?: { bytes: Buffer; name: string }, token = seller.token) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (file) form.append("file", new Blob([new Uint8Array(file.bytes)]), file.name);
    return request(app.url, "POST", `/api/store/templates/${id}/media`, { token, body: form, raw: true });
  };
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
  const mediaCount = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from store_template_media`);

  const logo = await upload({ media_type: "logo" }, { bytes: png, name: "logo.png" });
  t.equal(logo.status, 201, logo.text);
  t.match(logo.body.store_template.logo, new RegExp(`/api/store/media/\\d+\\?v=[0-9a-f]{16}$`));
  const image = await upload({ media_type: "image", title: "Screen" }, { bytes: png, name: "s.png" });
  t.equal(image.body.store_template.images.length, 1);
  t.match(image.body.store_template.images[0], { title: "Screen", width: 40, height: 30, file_path: /^\/api\/store\/media\/\d+\?v=[0-9a-f]{16}$/ });
  // The spec's Template media (id, media_type, file_path for images and logos, video_url, title) answers the upload.
  t.match(image.body.media, { id: image.body.store_template.images[0].id, media_type: "image", title: "Screen", file_path: image.body.store_template.images[0].file_path, video_url: null });
  t.equal(image.body.media.url, `${app.url}${image.body.media.file_path}`);
  const video = await upload({ media_type: "video", video_url: "https://www.youtube.com/watch?v=abc" });
  t.equal(video.status, 201, video.text);
  t.equal(video.body.store_template.media.length, 2, "image and video");
  t.match(video.body.media, { media_type: "video", video_url: "https://www.youtube.com/watch?v=abc", file_path: null });

  const before = await mediaCount();
  t.equal((await upload({ media_type: "video", video_url: "https://evil.example.com/v.mp4" })).status, 422, "unknown video host");
  t.equal((await upload({ media_type: "image" }, { bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>'), name: "x.svg" })).status, 422);
  t.equal((await upload({ media_type: "image" }, { bytes: Buffer.from("<html></html>"), name: "x.png" })).status, 422);
  t.equal((await upload({ media_type: "image" }, { bytes: png, name: "x.png" }, other.token)).status, 404, "a draft is hidden from others");
  t.equal(await mediaCount(), before, "nothing stored by refused uploads");

  const logoUrl = new URL(logo.body.store_template.logo);
  t.equal((await fetch(`${app.url}${logoUrl.pathname}`)).status, 404, "not served while a draft");
  t.equal((await request(app.url, "POST", `/api/store/templates/${id}/publish`, { token: seller.token })).status, 200);
  const served = await fetch(`${app.url}${logoUrl.pathname}${logoUrl.search}`);
  t.equal(served.status, 200);
  t.equal(served.headers.get("content-type"), "image/png");
  t.equal(served.headers.get("x-content-type-options"), "nosniff");
  t.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 40);
  const again = await fetch(`${app.url}${logoUrl.pathname}`, { headers: { "if-none-match": served.headers.get("etag")! } });
  t.equal(again.status, 304);

  const mediaId = Number(logoUrl.pathname.split("/").pop());
  t.equal((await request(app.url, "DELETE", `/api/store/media/${mediaId}`, { token: other.token })).status, 403);
  t.equal((await request(app.url, "DELETE", `/api/store/media/${mediaId}`, { token: seller.token })).status, 200);
  t.equal((await fetch(`${app.url}${logoUrl.pathname}`)).status, 404);
  t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from media_garbage where storage_key like 'media/store/%'`), 1, "its file left to the media sweep");

  await t.test("two uploads at once into the last free place: one is stored, the limit holds", async (t) => {
    const free = MAX_STORE_MEDIA - (await mediaCount());
    for (let i = 0; i < free - 1; i++) t.equal((await upload({ media_type: "video", video_url: `https://vimeo.com/${i}` })).status, 201);
    // Another session keeps new media rows from being written until both uploads have counted.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query("begin");
    await holder.query("lock table store_template_media in share row exclusive mode");
    const both = Promise.all(["a", "b"].map((v) => upload({ media_type: "video", video_url: `https://vimeo.com/last-${v}` })));
    await untilWaitingOnLocks(app.pool, 2, "both uploads waiting", 20_000);
    await holder.query("rollback");
    t.same((await both).map((res) => res.status).sort(), [201, 422]);
    t.equal(await mediaCount(), MAX_STORE_MEDIA);
  });
});
