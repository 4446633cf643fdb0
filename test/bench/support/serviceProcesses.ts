/**
 * The service as deployed, for the soak benchmark: one `web` and one `worker` process of the
 * project's own CLI (shared/cli/bin.ts, what the Procfile's `npm run web` / `npm run worker`
 * start), configured only through the environment the README documents, in production mode.
 * Their JSON log lines are read for warnings and errors (the log level is `warn`), so a fault
 * the service only logs still shows in the benchmark's figures. Each runs with Node's inspector
 * on a loopback port (idle until a session attaches), through which the benchmark forces a full
 * garbage collection before it reads what a process holds: without it, a process's RSS under
 * a steady load is a saw-tooth of 100 MB and more, and a comparison of two points measures
 * where in it they fell.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { WebSocket } from "ws";
import { freePort } from "../../../shared/db/embedded.ts";
import { profileFlags } from "./profile.ts";

type Child = ChildProcessByStdio<null, Readable, Readable> & { inspector: Promise<string> };

/** What a process holds after a full garbage collection, bytes. */
export interface CollectedMemory {
  rss: number;
  heapUsed: number;
  /** Memory of ArrayBuffers, Buffers and WebAssembly memories of the main thread, and V8's external allocations. */
  external: number;
  /** Threads of the process (Node's own, libuv's pool and every worker thread). */
  threads: number;
  /** The process's worker threads (by script name): heap used and external memory of each. */
  workerThreads: { name: string; heapUsed: number; external: number }[];
}

/** Warnings and errors one process logged. */
export interface LogTally {
  warnings: number;
  errors: number;
  /** The first few of them (level and message), for the report. */
  samples: string[];
}

export interface ServiceProcesses {
  url: string;
  web: Child;
  worker: Child;
  /** The realtime app key clients connect with. */
  realtimeKey: string;
  /** Bearer token of `/metrics` (required in production). */
  metricsToken: string;
  logs: { web: LogTally; worker: LogTally };
  /** Stops both with SIGTERM (as a platform does), SIGKILL after `graceMs`; resolves with their exit codes. */
  stop(graceMs?: number): Promise<{ web: number | null; worker: number | null }>;
}

const cli = new URL("../../../shared/cli/bin.ts", import.meta.url).pathname;

/** Counts the warn (40) and error-or-worse (50+) lines of a process's JSON log. */
function tallyLogs(child: Child): LogTally {
  const tally: LogTally = { warnings: 0, errors: 0, samples: [] };
  let rest = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      let entry: { level?: number; msg?: string; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if ((entry.level ?? 0) < 40) continue;
      if ((entry.level ?? 0) >= 50) tally.errors += 1;
      else tally.warnings += 1;
      if (tally.samples.length < 8) tally.samples.push(`${entry.level! >= 50 ? "error" : "warn"}: ${entry.msg ?? ""}${entry.err?.message ? ` (${entry.err.message})` : ""}`);
    }
  });
  return tally;
}

/** A process's thread count, from /proc. */
export function procThreads(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
}

/** Reads the inspector's address from the process's stderr, and passes every other line on. */
function withInspector(child: ChildProcessByStdio<null, Readable, Readable>): Child {
  let rest = "";
  const inspector = new Promise<string>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the process exited before its inspector listened")));
    child.stderr.on("data", (chunk: Buffer) => {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^Debugger listening on (ws:\/\/\S+)/.exec(line);
        if (match) resolve(match[1]!);
        else if (!/^(Debugger (attached|ending)|For help, see: )/.test(line)) process.stderr.write(`${line}\n`);
      }
    });
  });
  inspector.catch(() => {}); // a start that fails is reported by the readiness check
  return Object.assign(child, { inspector });
}

/**
 * Forces full garbage collections in `child` and in each of its worker threads (the template
 * sandbox, SQL parse and deflate threads each have a V8 heap of their own) through its
 * inspector, and answers what the process holds then. Two collections each: objects kept only
 * by finalizers or weak maps go in the second.
 */
export async function collectedMemory(child: Child): Promise<CollectedMemory> {
  const ws = new WebSocket(await child.inspector);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  type Message = { id?: number; method?: string; params?: { sessionId?: string; message?: string; workerInfo?: { url: string } }; error?: { message: string }; result?: { result?: { value?: unknown } } };
  let id = 0;
  const workers: { sessionId: string; url: string }[] = [];
  const pending = new Map<string, (message: Message) => void>();
  ws.on("message", (data: Buffer) => {
    const message = JSON.parse(data.toString("utf8")) as Message;
    if (message.method === "NodeWorker.attachedToWorker") workers.push({ sessionId: message.params!.sessionId!, url: message.params!.workerInfo!.url });
    else if (message.method === "NodeWorker.receivedMessageFromWorker") {
      const inner = JSON.parse(message.params!.message!) as Message;
      pending.get(`${message.params!.sessionId}:${inner.id}`)?.(inner);
    } else if (message.id !== undefined) pending.get(`:${message.id}`)?.(message);
  });
  /** Sends a protocol command to the main thread, or through NodeWorker to a worker thread's session. */
  const send = (method: string, params: Record<string, unknown> = {}, sessionId = "") =>
    new Promise<Message>((resolve, reject) => {
      const mine = (id += 1);
      const key = `${sessionId}:${mine}`;
      const timer = setTimeout(() => done({ error: { message: "no answer within 30 s" } }), 30_000);
      const done = (message: Message) => {
        clearTimeout(timer);
        pending.delete(key);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message);
      };
      pending.set(key, done);
      const command = JSON.stringify({ id: mine, method, params });
      ws.send(sessionId ? JSON.stringify({ id: (id += 1), method: "NodeWorker.sendMessageToWorker", params: { sessionId, message: command } }) : command);
    });
  const usage = async (sessionId = "") => {
    await send("HeapProfiler.collectGarbage", {}, sessionId);
    await send("HeapProfiler.collectGarbage", {}, sessionId);
    const answer = await send("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true }, sessionId);
    return JSON.parse(String(answer.result?.result?.value)) as { rss: number; heapUsed: number; external: number };
  };
  try {
    await send("NodeWorker.enable", { waitForDebuggerOnStart: false });
    await new Promise((resolve) => setTimeout(resolve, 500)); // the threads' sessions attach
    const threads = [];
    for (const worker of workers) threads.push({ url: worker.url, ...(await usage(worker.sessionId)) });
    const main = await usage();
    await send("NodeWorker.disable");
    return {
      rss: main.rss,
      heapUsed: main.heapUsed,
      external: main.external,
      threads: procThreads(child.pid!),
      workerThreads: threads.map((t) => ({ name: path.basename(t.url), heapUsed: t.heapUsed, external: t.external })),
    };
  } finally {
    ws.close();
  }
}

function exited(child: Child): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/**
 * Starts `web` and `worker` on `databaseUrl` (already migrated) and resolves once the web
 * process answers /api/health with a live worker. `env` adds or overrides variables.
 */
export async function startService(databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<ServiceProcesses> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), "soak-data-"));
  const realtimeKey = randomBytes(10).toString("hex");
  const metricsToken = randomBytes(16).toString("hex");
  const serviceEnv: Record<string, string> = {
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    HOST: "127.0.0.1",
    PORT: String(port),
    APP_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    APP_KEY: randomBytes(32).toString("hex"),
    OAUTH_CLIENT_ID: "soak-client",
    OAUTH_CLIENT_SECRET: randomBytes(24).toString("base64url"),
    REALTIME_APP_ID: "soak",
    REALTIME_APP_KEY: realtimeKey,
    REALTIME_APP_SECRET: randomBytes(24).toString("hex"),
    METRICS_TOKEN: metricsToken,
    LOG_LEVEL: "warn",
    ...env,
  };
  const start = (command: "web" | "worker"): Child =>
    withInspector(spawn(process.execPath, ["--inspect=127.0.0.1:0", ...profileFlags(), cli, command], { env: { ...process.env, ...serviceEnv }, stdio: ["ignore", "pipe", "pipe"] }));
  const web = start("web");
  const worker = start("worker");
  const logs = { web: tallyLogs(web), worker: tallyLogs(worker) };
  const stop = async (graceMs = 30_000) => {
    const codes = Promise.all([exited(web), exited(worker)]);
    for (const child of [web, worker]) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => [web, worker].forEach((child) => child.kill("SIGKILL")), graceMs);
    const [webCode, workerCode] = await codes;
    clearTimeout(timer);
    await rm(dataDir, { recursive: true, force: true });
    return { web: webCode, worker: workerCode };
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    for (;;) {
      if (web.exitCode !== null || worker.exitCode !== null) throw new Error(`a service process exited while starting (web ${web.exitCode}, worker ${worker.exitCode})`);
      if (Date.now() > deadline) throw new Error(`the service was not ready within ${timeoutMs} ms (${last})`);
      try {
        const res = await fetch(`${url}/api/health`);
        const body = (await res.json()) as { queue?: { workers?: number | null } };
        last = `health ${res.status}, ${body.queue?.workers ?? 0} workers`;
        if (res.status === 200 && (body.queue?.workers ?? 0) > 0) break;
      } catch (error) {
        last = (error as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } catch (error) {
    await stop(1000);
    throw error;
  }
  return { url, web, worker, realtimeKey, metricsToken, logs, stop };
}
