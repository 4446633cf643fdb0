/**
 * Security review finding 11: the upload form's SSH deployment no longer unpacks the zip in
 * memory. Three zips of 90 MiB each once inflated are deployed at once through POST
 * /deployments/upload to a real SSH peer on loopback, by a web process and a worker process
 * of their own; the peak resident memory of each (VmHWM, reset before the run where the
 * kernel allows, and sampled besides) grows by less than 160 MiB over its settled size, and
 * every file arrives byte for byte.
 *
 * Why these sizes prove it: a process that unpacked the archives in memory (the web side to
 * check them, the worker side to deploy them) would hold all three inflated archives at
 * once, 270 MiB plus the zips, well past the 160 MiB bound. The streaming path does not
 * stay perfectly flat (garbage of the 1 MiB entries waits for the collector, more so on a
 * busy machine): it grew by 48–65 MB (web) and 80–104 MB (worker) for three 90 MiB uploads,
 * 126–145 MB (worker) for four, and 64–104 MB for two of 64–80 MiB, so fewer or smaller archives
 * would leave no clear gap between the two; three of 90 MiB keep one on both sides. Every
 * inflated byte costs CPU in the worker, the SSH peer and the check (inflate, encrypt,
 * decrypt, hash), so the archives are no larger than that contrast needs. The entries
 * deflate about 20:1 (a ~5 MiB zip each), within the reader's ratio limit: the zip's own
 * size decides nothing here, the inflated size does, and every zip byte costs CPU in the
 * web process, PostgreSQL (storage) and the worker's fetch.
 *
 * The bound is memory, not time: the requests may take as long as the machine needs (a 202
 * answer is followed to its job).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { freshDatabase } from "../../support/db.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { startSshPeer } from "../../support/peers/sshPeer.ts";
import { spawnReady } from "../../support/processes.ts";
import { until } from "../../support/wait.ts";

const MB = 1024 * 1024;
const ENTRIES = 90;
/** Uploads deployed at once. */
const UPLOADS = [1, 2, 3];
const BOUND = 160 * MB;

/** One 1 MiB file: a twentieth random bytes, the rest zeros, in 4 KiB blocks (deflates about 20:1). */
function entryContent(): Buffer {
  const content = Buffer.alloc(MB);
  for (let at = 0; at < MB; at += 4096) randomBytes(205).copy(content, at);
  return content;
}

/** Resident and peak resident memory of a process, in bytes. */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** Resets the kernel's peak RSS of `pid` to its current RSS; false where that is not allowed. */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

t.test("three parallel 90 MiB (inflated) zip deployments over SSH keep web and worker memory bounded", async (t) => {
  const db = await freshDatabase(t);
  const ssh = await startSshPeer();
  t.teardown(() => ssh.close());
  const web = await spawnReady(t, "test/support/webProcess.ts", { DATABASE_URL: db.url });
  const url = `http://127.0.0.1:${/ready (\d+)/.exec(web.output())![1]}`;
  const worker = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url, WORKER_CONCURRENCY: "4" });
  const { token } = await buildUserWithToken(db.pool);

  const files = Array.from({ length: ENTRIES }, (_, i) => ({ path: `data/part-${String(i).padStart(3, "0")}.bin`, content: entryContent() }));
  const digests = new Map(files.map((f) => [f.path, createHash("sha256").update(f.content).digest("hex")]));
  const chunks: Buffer[] = [];
  for await (const chunk of createZipStream(files)) chunks.push(chunk as Buffer);
  const zip = Buffer.concat(chunks);
  files.length = 0;
  t.ok(zip.length > 3 * MB && zip.length < 7 * MB, `the zip is ${(zip.length / MB).toFixed(1)} MiB (${ENTRIES} MiB inflated)`);

  const deployTo = async (folder: string, archive: Buffer) => {
    const form = new FormData();
    const fields = { deployment_method: "ssh", ssh_host: ssh.host, ssh_port: String(ssh.port), ssh_username: ssh.username, ssh_auth_method: "password", ssh_password: ssh.password, ssh_path: folder };
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append("archive", new Blob([archive]), "site.zip");
    const res = await request(url, "POST", "/api/deployments/upload", { token, body: form, raw: true });
    if (res.status === 200) return res.body.upload;
    t.equal(res.status, 202, res.text);
    const job = await until(
      async () => {
        const polled = await client(url, token).get(`/api/jobs/${res.body.job.id}`);
        return ["succeeded", "failed"].includes(polled.body.job?.status) ? polled.body.job : undefined;
      },
      { message: `the ${folder} deployment's job`, timeoutMs: 600_000, intervalMs: 500 },
    );
    return job.result;
  };

  // A small deployment first, so both processes have loaded everything a deployment uses.
  const warmChunks: Buffer[] = [];
  for await (const chunk of createZipStream([{ path: "warm.txt", content: "warm" }])) warmChunks.push(chunk as Buffer);
  t.match(await deployTo("warm", Buffer.concat(warmChunks)), { status: "succeeded" });

  const processes = { web: web.pid, worker: worker.pid };
  const baseline: Record<string, number> = {};
  const peak: Record<string, number> = {};
  let resettable = true;
  for (const [name, pid] of Object.entries(processes)) {
    baseline[name] = (await memoryOf(pid)).rss;
    peak[name] = baseline[name]!;
    resettable = (await resetPeak(pid)) && resettable;
  }
  const sampler = setInterval(() => {
    for (const [name, pid] of Object.entries(processes)) {
      void memoryOf(pid).then(
        ({ rss }) => (peak[name] = Math.max(peak[name]!, rss)),
        () => undefined,
      );
    }
  }, 25);

  const outcomes = await Promise.all(UPLOADS.map((n) => deployTo(`site${n}`, zip)));
  clearInterval(sampler);
  for (const [name, pid] of Object.entries(processes)) if (resettable) peak[name] = Math.max(peak[name]!, (await memoryOf(pid)).hwm);

  for (const [n, outcome] of outcomes.entries()) t.match(outcome, { status: "succeeded", files: ENTRIES, bytes: ENTRIES * MB }, `site${n + 1}: ${outcome?.error?.message ?? "deployed"}`);
  for (const name of Object.keys(processes)) {
    const growth = peak[name]! - baseline[name]!;
    t.ok(growth < BOUND, `${name} process: peak RSS grew by ${(growth / MB).toFixed(0)} MB over ${(baseline[name]! / MB).toFixed(0)} MB (bound ${BOUND / MB} MiB; peak ${resettable ? "from VmHWM and samples" : "sampled"})`);
  }

  for (const n of UPLOADS) {
    let exact = 0;
    for (const [file, digest] of digests) {
      const content = await readFile(path.join(ssh.home, `site${n}`, "current", file));
      if (content.length === MB && createHash("sha256").update(content).digest("hex") === digest) exact += 1;
    }
    t.equal(exact, ENTRIES, `site${n}: every file arrived byte for byte`);
  }
});
