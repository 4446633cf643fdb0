/**
 * Template compiling off the web process's event loop. Checking a template (`compile`, a zip
 * import) and planning its output paths (`structure`) compile it, and a template at the node
 * budget takes seconds and hundreds of MB to compile: done on the request's thread, every other
 * request of the process waited that long. Here they run on a small pool of worker threads
 * (piscina; docs/decisions.md), each task under a deadline and each thread under a heap limit:
 * a compile past either is ended by terminating its thread and reported as a template issue,
 * as a template past the node budget is. Renders (preview, execute) compile in the worker
 * process's jobs and are not routed through here.
 */
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { AppError } from "../../errors.ts";
import { TemplateError } from "../errors.ts";
import type { CheckResult, PlanResult, TemplateIssue, TemplateSource } from "../types.ts";
import { CONTENT_FILE } from "../types.ts";
import type { CompileReply, CompileTask } from "./thread.ts";

export interface CompilerOptions {
  /** Threads per process (TEMPLATE_COMPILE_WORKERS). */
  threads: number;
  /** How long one check or plan may run, queue wait excluded (TEMPLATE_COMPILE_TIME_LIMIT_MS). */
  timeLimitMs: number;
  /** Old-generation heap limit of a compile thread (TEMPLATE_COMPILE_MEMORY_MB). */
  memoryMb: number;
}

/** Tasks waiting per thread before the next is refused (503 `template_compiler_busy`). */
const queuePerThread = 8;
/** A thread idle this long is stopped; the next compile starts one again. */
const idleTimeoutMs = 60_000;

export class TemplateCompiler {
  private readonly options: CompilerOptions;
  private pool: Piscina | null = null;
  private closed = false;
  /** Checks and plans queued or running. */
  private inFlight = 0;

  constructor(options: CompilerOptions) {
    this.options = options;
  }

  /** Checks a template's syntax, includes and repeat paths (checkTemplate) on a compile thread. */
  async check(source: TemplateSource): Promise<CheckResult> {
    const reply = await this.run({ op: "check", source });
    return reply.ok ? reply.check! : { valid: false, errors: reply.issues };
  }

  /**
   * The output paths a preview run would write (planTemplate in `preview` mode).
   * @throws TemplateError (syntax, too large, past the compile limits)
   */
  async plan(source: TemplateSource, scope: Record<string, unknown>): Promise<PlanResult> {
    const reply = await this.run({ op: "plan", source: { content: source.content, files: source.files }, scope });
    if (!reply.ok) throw new TemplateError(reply.issues);
    return reply.plan!;
  }

  /** Stops the threads; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }

  private threads(): Piscina {
    if (this.closed) throw new Error("the template compiler is closed");
    return (this.pool ??= new Piscina({
      filename: new URL("./thread.ts", import.meta.url).href,
      minThreads: 0,
      maxThreads: this.options.threads,
      idleTimeout: idleTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb, stackSizeMb: 8 },
    }));
  }

  private async run(task: CompileTask): Promise<CompileReply> {
    const pool = this.threads();
    // piscina's own queue bound does not count abortable tasks, so the bound is kept here.
    if (this.inFlight >= this.options.threads * (1 + queuePerThread)) {
      throw new AppError(503, "template_compiler_busy", "Too many templates are being compiled at once; try again in a few seconds.", undefined, { "Retry-After": "5" });
    }
    // The deadline counts from the moment the thread takes the task (it says so on `started`):
    // neither the wait behind another template's compile nor a new thread's start-up counts.
    const controller = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    port1.once("message", () => (timer = setTimeout(() => controller.abort(), this.options.timeLimitMs)));
    this.inFlight += 1;
    try {
      return (await pool.run({ ...task, started: port2 }, { signal: controller.signal, transferList: [port2] })) as CompileReply;
    } catch (error) {
      if (controller.signal.aborted) return { ok: false, issues: [issue(`The template took longer than ${seconds(this.options.timeLimitMs)} to compile; make it smaller or simpler (fewer nested loops, fewer files).`)] };
      if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") {
        return { ok: false, issues: [issue(`The template needs more than ${this.options.memoryMb} MB to compile; make it smaller or simpler (fewer nested loops, fewer files).`)] };
      }
      throw error;
    } finally {
      this.inFlight -= 1;
      clearTimeout(timer);
      port1.close();
    }
  }
}

const issue = (message: string): TemplateIssue => ({ file: CONTENT_FILE, line: 1, column: 1, message });
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
