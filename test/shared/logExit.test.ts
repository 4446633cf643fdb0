/**
 * A short command's only log line, logged just before the process ends on its own, reaches
 * stdout: the logger's exit hook writes what it still holds synchronously. (Handing it to
 * sonic-boom's asynchronous write at exit lost the migrate command's one line once in a CI
 * run on a loaded machine; on an idle machine that loss does not show, so this guards the
 * behaviour rather than reproducing the race.)
 */
import { spawn } from "node:child_process";
import t from "tap";
import { nodeCommand } from "../support/processes.ts";

const logger = new URL("../../shared/logger.ts", import.meta.url).href;
const script = `
const { createLogger } = await import(${JSON.stringify(logger)});
createLogger("info", "exit-test").info("the only line");
`;

async function run(): Promise<{ code: number | null; out: string; err: string }> {
  const [command, args] = nodeCommand("--input-type=module", "-e", script);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, out, err };
}

t.test("a process's last line, logged as it ends, is written", async (t) => {
  const runs = await Promise.all(Array.from({ length: 6 }, run));
  for (const { code, out, err } of runs) {
    t.equal(code, 0, err);
    t.same(out.split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg), ["the only line"]);
  }
});
