/**
 * Child processes of the realtime benchmarks: servers and WebSocket clients driven over IPC.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type { ClientCommand, ClientReply } from "./realtimeClients.ts";

/**
 * Starts a Node script with its open-file soft limit raised to the hard limit (thousands
 * of sockets need thousands of descriptors; as root, the hard limit is raised first to
 * `BENCH_NOFILE`, default 200,000), with an IPC channel. `BENCH_CHILD_NODE_FLAGS` adds node
 * flags to these processes, e.g. `--cpu-prof --cpu-prof-dir=<folder>` for a profile of the
 * web server and of the clients (written when they exit: see `stopChildren`).
 */
export function spawnNode(script: URL, env: Record<string, string>): ChildProcess & { stdout: NonNullable<ChildProcess["stdout"]> } {
  const flags = (process.env.BENCH_CHILD_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
  const child = spawn(
    "/bin/sh",
    ["-c", `ulimit -Hn ${Number(process.env.BENCH_NOFILE ?? 200_000)} 2>/dev/null; ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"`, "sh", process.execPath, ...flags, script.pathname],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit", "ipc"] },
  );
  return child as ChildProcess & { stdout: NonNullable<ChildProcess["stdout"]> };
}

/** Resolves with the next IPC message from `child` that `accept` takes. */
export function nextMessage<T>(child: ChildProcess, accept: (message: unknown) => message is T, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no answer from process ${child.pid} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: unknown) => {
      if (accept(message)) done(undefined, message);
    };
    const onExit = (code: number | null) => done(new Error(`process ${child.pid} exited (${code})`));
    const done = (error?: Error, message?: T) => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      if (error) reject(error);
      else resolve(message!);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

export const reply =
  <K extends ClientReply["type"]>(type: K) =>
  (message: unknown): message is Extract<ClientReply, { type: K }> =>
    typeof message === "object" && message !== null && (message as { type?: unknown }).type === type;

/** Sends `command` to `child` and resolves with its answer of `type`. */
export async function ask<K extends ClientReply["type"]>(child: ChildProcess, command: ClientCommand, type: K, timeoutMs = 60_000) {
  const answer = nextMessage(child, reply(type), timeoutMs);
  child.send(command);
  return answer;
}

/** A process's CPU time (user + system) so far in milliseconds, from /proc (10 ms resolution). */
export function procCpuMs(pid: number): number {
  // Fields after the command name (which may hold spaces), counted from the state field:
  // utime and stime are the 12th and 13th, in clock ticks (100 per second on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A process's open-files limit (soft), from /proc; Infinity when unlimited. */
export function procOpenFilesLimit(pid: number): number {
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
  return !match || match[1] === "unlimited" ? Infinity : Number(match[1]);
}

/** A process's resident and peak resident memory in bytes, from /proc. */
export function procMemory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}


/** Stops child processes: SIGTERM (they exit, writing any CPU profile), SIGKILL after `graceMs`. */
export async function stopChildren(children: ChildProcess[], graceMs = 10_000): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
}
