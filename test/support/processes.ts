/**
 * Child processes for tests: the command that runs a script with Node 24 as the service's
 * own processes run (without the test runner's module hooks), a start that waits for the
 * script's "ready" line, and the part of our environment a child with settings of its own
 * still inherits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Test } from "tap";

/**
 * What a child started with an environment of its own still takes from ours: the PATH, and
 * Node's compile cache when the run has one (module loading is most of a child's start).
 */
export function inheritedEnv(): Record<string, string> {
  const { PATH, NODE_COMPILE_CACHE } = process.env;
  return { ...(PATH ? { PATH } : {}), ...(NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE } : {}) };
}

/**
 * `[command, args]` running `args` with this Node. The test runner adds its module hooks to
 * every child's NODE_OPTIONS (they record which files a process loads, for coverage that
 * this suite does not collect) and they add about a fifth to a child's start; `env -u`
 * starts Node without them, as the service runs outside the tests.
 */
export function nodeCommand(...args: string[]): [string, string[]] {
  return ["env", ["-u", "NODE_OPTIONS", process.execPath, ...args]];
}

export interface Child {
  process: ChildProcess;
  pid: number;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns `script` (a path relative to the repository root) and resolves once it prints `ready`. */
export async function spawnReady(t: Test, script: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Child> {
  const [command, args] = nodeCommand(new URL(`../../${script}`, import.meta.url).pathname);
  const child = spawn(command, args, {
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
