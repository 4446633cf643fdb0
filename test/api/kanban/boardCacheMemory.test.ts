/**
 * The board list cache keeps each answer in memory of its own size: zlib answers a small
 * compressed board as a view on its 64 KB output chunk, and a cached view held all of it
 * (~65 KB per project for a 163-byte answer, found by the soak benchmark as growth of the web
 * process's memory outside the V8 heap, beyond what the cache's byte bound counts).
 */
import vm from "node:vm";
import v8 from "node:v8";
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const PROJECTS = 40;

/** ArrayBuffer memory of this process (the app runs in it) after full collections. */
function arrayBuffers(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

t.test("cached compressed board reads hold about their own size", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const projects: number[] = [];
  for (let i = 0; i < PROJECTS; i += 1) {
    const project = (await api.post("/api/projects", { name: `Board ${i}` })).body.project.id as number;
    const board = await api.post(`/api/projects/${project}/kanban`, { name: "Sprint", columns: ["To do", "Done"] });
    t.equal(board.status, 201, board.text);
    projects.push(project);
  }
  const read = async (project: number, encoding: string) => {
    const res = await fetch(`${app.url}/api/projects/${project}/kanban`, { headers: { authorization: `Bearer ${owner.token}`, "accept-encoding": encoding } });
    await res.arrayBuffer();
    return res;
  };
  // One read in each coding first, so what the first requests of a process allocate once is not counted.
  t.equal((await read(projects[0]!, "br")).headers.get("content-encoding"), "br");
  t.equal((await read(projects[0]!, "gzip")).headers.get("content-encoding"), "gzip");
  const before = arrayBuffers();
  for (const project of projects.slice(1)) {
    t.equal((await read(project, "br")).status, 200);
    t.equal((await read(project, "gzip")).status, 200);
  }
  const perProject = (arrayBuffers() - before) / (PROJECTS - 1);
  t.ok(perProject < 16 * 1024, `a cached project holds ${Math.round(perProject / 1024)} KB of buffers in two codings (each answer is under 1 KB)`);
});
