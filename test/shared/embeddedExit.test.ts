/**
 * An embedded server is detached from the process that starts it (its own process group), so
 * a process that exits without stopping it (process.exit on a second signal or a test
 * runner's bail, an uncaught error) must still shut it down: a child process starts one and
 * exits at once, and the server's port then closes.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readlink, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { until } from "../support/wait.ts";

const embedded = fileURLToPath(new URL("../../shared/db/embedded.ts", import.meta.url));

/** Whether something accepts connections on the loopback port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/** Runs `exit` (code run after the server started, given `server`) in a child process; resolves with the server's port and cluster folder and the child's exit code. */
function startThenExit(dataDir: string, exit: string): Promise<{ port: number; clusterDir: string; code: number | null }> {
  const script = `
    import { startEmbeddedPostgres } from ${JSON.stringify(embedded)};
    const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, settings: { fsync: "off" } });
    process.stdout.write(JSON.stringify({ port: server.port, clusterDir: server.clusterDir }) + "\\n");
    ${exit}
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (!line) return reject(new Error(`the child did not start a server (exit ${code}): ${err}`));
      resolve({ ...(JSON.parse(line) as { port: number; clusterDir: string }), code });
    });
  });
}

for (const [how, exit, expectedCode] of [
  ["process.exit", "process.exit(3);", 3],
  ["an uncaught error", "setImmediate(() => { throw new Error('boom'); });", 1],
] as const) {
  t.test(`a process that ends by ${how} without stopping its embedded server shuts the server down`, async (t) => {
    const base = await mkdtemp(path.join(os.tmpdir(), "sf-embedded-exit-"));
    const dataDir = path.join(base, "pg");
    const { port, clusterDir, code } = await startThenExit(dataDir, exit);
    t.teardown(async () => {
      // The data folder is left behind (an exit handler can only signal); remove it and,
      // when the cluster was placed elsewhere, its real folder too.
      const target = await readlink(dataDir).catch(() => null);
      await rm(base, { recursive: true, force: true });
      if (target) await rm(clusterDir, { recursive: true, force: true });
    });
    t.equal(code, expectedCode, "the child exited as it was made to");
    await until(async () => !(await listening(port)), { timeoutMs: 15_000, message: `the server on port ${port} to stop` });
    t.pass(`nothing listens on port ${port} any more`);
  });
}
