/**
 * Host side of the sandbox: a small pool of worker threads per process (TEMPLATE_SANDBOX_WORKERS,
 * default 2), each started on first use. A render's session lives on one thread, chosen as the
 * one with the fewest open sessions when the render meets its first code block, so a render
 * that holds its thread for its whole budget cannot delay renders on the others (security
 * review finding 12). A watchdog replaces the worker when a request outlives its deadline (QuickJS
 * only polls its interrupt handler between bytecodes, so a single long native call such as a
 * huge `repeat` could otherwise overrun it) or when the worker reports its engine unusable.
 * Requests of other renders caught by a replacement fail with SandboxRestarted; sessions retry.
 */
import { Worker } from "node:worker_threads";
import { stateSlots, type OpenRequest, type Reply, type Request, type RunRequest } from "./protocol.ts";

/** A request as callers pass it (the host numbers it). */
export type Outgoing = Omit<OpenRequest, "id"> | Omit<RunRequest, "id">;

/** A request lost because the worker was replaced while it was queued or running. */
export class SandboxRestarted extends Error {
  constructor() {
    super("the code sandbox was restarted");
    this.name = "SandboxRestarted";
  }
}

/** Slack past a block's own deadline before the watchdog terminates the worker. */
const graceMs = 100;
const watchdogEveryMs = 20;

interface Pending {
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
  timeMs: number;
}

/** One worker thread and the requests in flight to it. */
export class SandboxHost {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  /** Bumped whenever the worker is replaced; sessions opened under an older one are gone. */
  generation = 0;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private state = new Float64Array(new SharedArrayBuffer(16));
  private watchdog: NodeJS.Timeout | null = null;

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const shared = new SharedArrayBuffer(16);
    this.state = new Float64Array(shared);
    const worker = new Worker(new URL("./worker.ts", import.meta.url), {
      workerData: { state: shared },
      resourceLimits: { stackSizeMb: 8 },
    });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on("message", (reply: Reply) => {
        if (reply.id === 0) {
          this.idle();
          return resolve();
        }
        const p = this.pending.get(reply.id);
        if (!p) return;
        this.pending.delete(reply.id);
        this.idle();
        p.resolve(reply);
        if (!reply.ok && reply.fatal) this.replace(reply.id);
      });
      worker.on("error", (error: Error) => {
        reject(error);
        if (this.worker === worker) this.replace(0);
      });
      worker.on("exit", () => {
        reject(new Error("the code sandbox exited while starting"));
        if (this.worker === worker) this.replace(0);
      });
    });
    return this.ready;
  }

  /** Drops the worker; every request still pending fails with SandboxRestarted except `culprit`, already answered. */
  private replace(culprit: number): void {
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    this.generation++;
    if (worker) void worker.terminate();
    const lost = [...this.pending.entries()].filter(([id]) => id !== culprit);
    this.pending.clear();
    this.idle();
    for (const [, p] of lost) p.reject(new SandboxRestarted());
  }

  /** With nothing in flight, lets the process exit despite the worker (it stays ref'd while busy or starting). */
  private idle(): void {
    if (this.pending.size !== 0) return;
    this.worker?.unref();
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  /** Terminates the worker when the running request is past its deadline plus grace. */
  private check(): void {
    const running = this.state[stateSlots.running]!;
    const p = this.pending.get(running);
    if (!p || Date.now() - this.state[stateSlots.startedAt]! <= p.timeMs + graceMs) return;
    this.pending.delete(running);
    p.resolve({ id: running, ok: false, kind: "time", message: "stopped by the watchdog" });
    this.replace(running);
  }

  /** Sends a request and resolves with the worker's reply. @throws SandboxRestarted */
  async request(message: Outgoing, timeMs: number): Promise<Reply> {
    await this.start();
    const worker = this.worker;
    if (!worker) throw new SandboxRestarted();
    worker.ref();
    const id = this.nextId++;
    const reply = new Promise<Reply>((resolve, reject) => this.pending.set(id, { resolve, reject, timeMs }));
    this.watchdog ??= setInterval(() => this.check(), watchdogEveryMs);
    worker.postMessage({ ...message, id });
    return reply;
  }

  /** Frees a session if the worker that holds it still runs. */
  close(session: number, generation: number): void {
    if (this.worker && generation === this.generation) this.worker.postMessage({ type: "close", session } satisfies Request);
  }

  /** Whether the worker thread exists (started by a first code block or warm()). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Starts the worker ahead of the first code block. */
  warm(): Promise<void> {
    return this.start();
  }
}

/** The worker threads of the process; sessions take one each (`acquire`) and give it back (`release`). */
export class SandboxPool {
  private size = 2;
  private readonly hosts: SandboxHost[] = [];
  private readonly sessions = new Map<SandboxHost, number>();

  /** Sets how many threads renders may spread over (TEMPLATE_SANDBOX_WORKERS); threads beyond it take no new sessions. */
  resize(size: number): void {
    this.size = Math.max(1, Math.trunc(size));
  }

  /** The thread with the fewest open sessions; a new one while the pool is below its size and every thread is taken. */
  acquire(): SandboxHost {
    const usable = this.hosts.slice(0, this.size);
    let best = usable[0];
    for (const host of usable) if ((this.sessions.get(host) ?? 0) < (this.sessions.get(best!) ?? 0)) best = host;
    if (!best || ((this.sessions.get(best) ?? 0) > 0 && usable.length < this.size)) {
      best = new SandboxHost();
      this.hosts.push(best);
    }
    this.sessions.set(best, (this.sessions.get(best) ?? 0) + 1);
    return best;
  }

  /** Gives back a thread taken by `acquire`. */
  release(host: SandboxHost): void {
    this.sessions.set(host, Math.max(0, (this.sessions.get(host) ?? 0) - 1));
  }

  /** Grows whenever any thread is replaced (tests read it). */
  get generation(): number {
    return this.hosts.reduce((sum, host) => sum + host.generation, 0);
  }

  /** Whether any thread exists. */
  get running(): boolean {
    return this.hosts.some((host) => host.running);
  }

  /** Starts the first thread ahead of the first code block. */
  warm(): Promise<void> {
    if (this.hosts.length === 0) this.hosts.push(new SandboxHost());
    return this.hosts[0]!.warm();
  }
}

/** The process-wide sandbox threads. */
export const sandboxHost = new SandboxPool();
