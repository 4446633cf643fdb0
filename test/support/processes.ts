/**
 * Child processes for tests: start a script with Node 24 and wait for its "ready" line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Test } from "tap";

export interface Child {
  process: ChildProcess;
  pid: number;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns `script` (a path relative to the repository root) and resolves once it prints `ready`. */
export async function spawnReady(t: Test, script: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Child> {
  const child = spawn(process.execPath, [new URL(`../../${script}`, import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      if (/^ready/m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before it was ready:\n${output}`));
    });
  });
  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  t.teardown(() => kill("SIGKILL"));
  return { process: child, pid: child.pid!, output: () => output, kill };
}
