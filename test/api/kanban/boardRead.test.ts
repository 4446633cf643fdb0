/**
 * The board read's delivery and its authorization (`GET /projects/{p}/kanban`): the cached
 * answer comes compressed to clients that accept brotli or gzip and plain to those that do
 * not, with the same content in every coding, an ETag per coding and 304 for any of them;
 * and the one-statement access check refuses a member the moment their team membership, the
 * team's share of the project or the project itself is gone, even with a warm cache and the
 * current ETag.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A GET with exactly the headers given (fetch would add its own Accept-Encoding and decode). */
function rawGet(baseUrl: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

t.test("the board read in each content coding", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool, { name: "Ada Lovelace" });
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Coded board" })).body.project as { id: number };
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Sprint", columns: ["To do", "Done"] })).body.board as { columns: { id: number }[] };
  for (let i = 0; i < 30; i += 1) {
    t.equal((await api.post("/api/kanban-cards", { column_id: board.columns[i % 2]!.id, title: `Card ${i}`, description: "Some **markdown** text" })).status, 201);
  }
  const path = `/api/projects/${project.id}/kanban`;
  const as = (acceptEncoding?: string, extra: Record<string, string> = {}) =>
    rawGet(app.url, path, { authorization: `Bearer ${owner.token}`, ...(acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding }), ...extra });

  const plain = await as();
  t.equal(plain.status, 200);
  t.equal(plain.headers["content-encoding"], undefined, "no Accept-Encoding: identity");
  t.match(plain.headers.vary, /accept-encoding/i);
  const content = JSON.parse(plain.body.toString("utf8")) as { data: { columns: { cards: unknown[] }[] }[] };
  t.equal(content.data[0]!.columns.reduce((n, c) => n + c.cards.length, 0), 30);
  const etag = plain.headers.etag!;
  t.match(etag, /^"kb\d+-[A-Za-z0-9_-]+"$/);

  const cases: [string, string | undefined, (body: Buffer) => Buffer][] = [
    ["gzip, deflate, br, zstd", "br", brotliDecompressSync],
    ["gzip, deflate", "gzip", gunzipSync],
    ["br;q=0, gzip", "gzip", gunzipSync],
    ["identity", undefined, (body) => body],
    ["deflate", undefined, (body) => body],
  ];
  for (const [accept, coding, decode] of cases) {
    for (const round of ["compressed now", "from the cache"]) {
      const res = await as(accept);
      t.equal(res.status, 200);
      t.equal(res.headers["content-encoding"], coding, `Accept-Encoding "${accept}" (${round}): ${coding ?? "identity"}`);
      t.equal(Number(res.headers["content-length"]), res.body.length);
      t.same(JSON.parse(decode(res.body).toString("utf8")), content, `the same content in ${coding ?? "identity"}`);
      t.equal(res.headers.etag, coding ? `${etag.slice(0, -1)}-${coding}"` : etag, "an ETag per coding");
    }
  }
  const br = await as("br");
  t.ok(br.body.length < plain.body.length / 4, `compressed ${br.body.length} of ${plain.body.length} bytes`);

  // A client's copy in any coding is current: 304, with the ETag of the coding it asked for now.
  for (const held of [etag, `${etag.slice(0, -1)}-br"`, `W/${etag.slice(0, -1)}-gzip"`]) {
    const again = await as("gzip", { "if-none-match": held });
    t.equal(again.status, 304, `If-None-Match ${held}`);
    t.equal(again.body.length, 0);
    t.equal(again.headers.etag, `${etag.slice(0, -1)}-gzip"`);
  }
  t.equal((await as("gzip", { "if-none-match": `"kb${project.id}-old-gzip"` })).status, 200, "another version's ETag gets the board");

  // A change makes a new version, compressed anew.
  t.equal((await api.put(`/api/kanban-columns/${board.columns[0]!.id}`, { name: "Backlog" })).status, 200);
  const changed = await as("br", { "if-none-match": `${etag.slice(0, -1)}-br"` });
  t.equal(changed.status, 200);
  t.not(changed.headers.etag, `${etag.slice(0, -1)}-br"`);
  t.equal((JSON.parse(brotliDecompressSync(changed.body).toString("utf8")) as { data: { columns: { name: string }[] }[] }).data[0]!.columns[0]!.name, "Backlog");
});

t.test("a grant ends with the membership, share or project that made it", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Shared board" })).body.project as { id: number };
  t.equal((await api.post(`/api/projects/${project.id}/kanban`, { name: "Sprint", columns: ["To do"] })).status, 201);
  const teamA = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project.id]);
  const viewerTeam = await buildTeam(app.pool, owner.user.id, { [viewer.user.id]: 4 }, [project.id]);
  const path = `/api/projects/${project.id}/kanban`;
  const read = (token: string, headers: Record<string, string> = {}) => rawGet(app.url, path, { authorization: `Bearer ${token}`, "accept-encoding": "gzip", ...headers });

  const warm = await read(member.token);
  t.equal(warm.status, 200, "a team member reads the board");
  const etag = warm.headers.etag!;
  t.equal((await read(viewer.token)).status, 200, "a viewer reads the board");
  for (const headers of [{}, { "if-none-match": etag }] as Record<string, string>[]) {
    const refused = await read(stranger.token, headers);
    t.equal(refused.status, 404, "a stranger is refused, with or without the current ETag");
    t.equal(refused.headers.etag, undefined);
    t.equal(refused.headers["content-encoding"], undefined, "the refusal is not the cached board");
  }

  t.equal((await api.delete(`/api/teams/${teamA}/members/${member.user.id}`)).status, 200);
  t.equal((await read(member.token)).status, 404, "removed from the team: refused on the next read");
  t.equal((await read(member.token, { "if-none-match": etag })).status, 404, "and no 304 for the ETag held from before");

  t.equal((await read(viewer.token)).status, 200);
  t.equal((await api.delete(`/api/teams/${viewerTeam}/projects/${project.id}`)).status, 200);
  t.equal((await read(viewer.token)).status, 404, "the team no longer shares the project: refused on the next read");

  t.equal((await read(owner.token)).status, 200);
  t.equal((await api.delete(`/api/projects/${project.id}`)).status, 200);
  t.equal((await read(owner.token)).status, 404, "a deleted project's board is gone for its owner too");
});
