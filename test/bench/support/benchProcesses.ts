/**
 * Child processes of the realtime benchmarks: servers and WebSocket clients driven over IPC.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type { ClientCommand, ClientReply } from "./realtimeClients.ts";

/**
 * Starts a Node script with its open-file soft limit raised to the hard limit (thousands
 * of sockets need thousands of descriptors; as root, the hard limit is raised first to
 * `BENCH_NOFILE`, default 200,000), with an IPC channel.
 */
export function spawnNode(script: URL, env: Record<string, string>): ChildProcess & { stdout: NonNullable<ChildProcess["stdout"]> } {
  const child = spawn(
    "/bin/sh",
    ["-c", `ulimit -Hn ${Number(process.env.BENCH_NOFILE ?? 200_000)} 2>/dev/null; ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"`, "sh", process.execPath, script.pathname],
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

/** A process's resident and peak resident memory in bytes, from /proc. */
export function procMemory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

