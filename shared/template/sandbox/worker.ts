/**
 * The sandbox worker thread: runs code blocks in QuickJS compiled to WebAssembly. QuickJS has
 * no I/O of its own (no modules loader, no timers, no `std`/`os`); we add only `print`, `echo`
 * and the frozen scope. Its interrupt handler stops a block at its deadline and its allocator
 * refuses memory past the limit. Anything QuickJS cannot contain (a host stack overflow inside
 * WebAssembly, an engine abort) is reported as fatal and the host replaces this thread; the
 * host also terminates it if a block outlives its deadline anyway.
 */
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from "quickjs-emscripten";
import { blockScript, bootstrapSource } from "./bootstrap.ts";
import { stateSlots, type FailureKind, type OpenRequest, type Reply, type Request, type RunRequest } from "./protocol.ts";

/** QuickJS's own stack guard; well below this thread's native stack (see stackSizeMb in host.ts). */
const maxStackBytes = 512 * 1024;

interface Session {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  bind: QuickJSHandle;
  take: QuickJSHandle;
  deadline: number;
}

const port = parentPort!;
const state = new Float64Array(workerData.state as SharedArrayBuffer);
const engine = await newQuickJSWASMModule(RELEASE_SYNC);
const sessions = new Map<number, Session>();

/** Thrown inside the worker for a failure that has a kind and a message. */
class BlockFailure extends Error {
  readonly kind: FailureKind;
  readonly line: number | undefined;
  readonly column: number | undefined;
  constructor(kind: FailureKind, message: string, line?: number, column?: number) {
    super(message);
    this.kind = kind;
    this.line = line;
    this.column = column;
  }
}

/** Classifies an error value dumped out of QuickJS. */
function failure(dumped: unknown, prefixLength: number): BlockFailure {
  const e = (typeof dumped === "object" && dumped !== null ? dumped : { message: String(dumped) }) as { name?: string; message?: string; stack?: string };
  const name = e.name ?? "Error";
  const message = e.message ?? String(dumped);
  if (dumped === null || /out of memory/i.test(message)) return new BlockFailure("memory", message);
  if (name === "InternalError" && message === "interrupted") return new BlockFailure("time", message);
  if (/stack overflow|call stack/i.test(message)) return new BlockFailure("stack", message);
  if (name === "RangeError" && message.startsWith("the block's output")) return new BlockFailure("output", message);
  const at = /block\.js:(\d+):(\d+)/.exec(e.stack ?? "");
  const line = at ? Number(at[1]) : undefined;
  const column = at ? (line === 1 ? Math.max(1, Number(at[2]) - prefixLength) : Number(at[2])) : undefined;
  return new BlockFailure("error", `${name}: ${message}`, line, column);
}

/** Unwraps an evaluation result or throws its classified failure. */
function unwrap(context: QuickJSContext, result: ReturnType<QuickJSContext["evalCode"]>, prefixLength: number): QuickJSHandle {
  if (!result.error) return result.value;
  const dumped = context.dump(result.error);
  result.error.dispose();
  throw failure(dumped, prefixLength);
}

function open(req: OpenRequest): string {
  const runtime = engine.newRuntime();
  const session: Session = { runtime, context: runtime.newContext(), bind: undefined!, take: undefined!, deadline: Infinity };
  sessions.set(req.session, session);
  runtime.setMemoryLimit(req.memoryBytes);
  runtime.setMaxStackSize(maxStackBytes);
  runtime.setInterruptHandler(() => Date.now() > session.deadline);
  const { context } = session;
  session.deadline = Date.now() + 10_000;
  context.newString(req.scope).consume((s) => context.setProp(context.global, "__scopeJson", s));
  const api = unwrap(context, context.evalCode(bootstrapSource(req.maxOutputBytes), "bootstrap.js"), 0);
  session.bind = context.getProp(api, "bind");
  session.take = context.getProp(api, "take");
  api.dispose();
  return "";
}

function run(req: RunRequest): string {
  const session = sessions.get(req.session);
  if (!session) throw new BlockFailure("crash", "the sandbox session is gone");
  const { context } = session;
  session.deadline = Date.now() + req.timeMs;
  context.newString(req.bindings).consume((json) => unwrap(context, context.callFunction(session.bind, context.undefined, json), 0).dispose());
  const { script, prefix } = blockScript(req.code, req.names);
  let value = unwrap(context, context.evalCode(script, "block.js", { type: "global", strict: true }), prefix.length);
  value = settle(session, value, prefix.length);
  const text = value.consume((v) => unwrap(context, context.callFunction(session.take, context.undefined, v), 0));
  return text.consume((t) => context.getString(t));
}

/**
 * Runs the promise jobs the block queued (`then` callbacks, async functions), under the same
 * deadline, and replaces a promise value by its result: a block may use promises but cannot
 * wait for anything outside itself, so a promise still pending afterwards is an error, and a
 * rejected one (e.g. `import()`, which has no module loader) fails the block.
 */
function settle(session: Session, value: QuickJSHandle, prefixLength: number): QuickJSHandle {
  const { context, runtime } = session;
  const jobs = runtime.executePendingJobs();
  if (jobs.error) {
    value.dispose();
    const dumped = context.dump(jobs.error);
    jobs.error.dispose();
    throw failure(dumped, prefixLength);
  }
  const state = context.getPromiseState(value);
  if (state.type === "fulfilled") {
    if (state.notAPromise) return value;
    value.dispose();
    return state.value;
  }
  value.dispose();
  if (state.type === "pending") throw new BlockFailure("error", "its value is a promise that never settles (code blocks cannot wait for anything)");
  const dumped = context.dump(state.error);
  state.error.dispose();
  const f = failure(dumped, prefixLength);
  throw f.kind === "error" ? new BlockFailure("error", `its promise was rejected: ${f.message}`, f.line, f.column) : f;
}

function close(id: number): void {
  const session = sessions.get(id);
  if (!session) return;
  sessions.delete(id);
  session.bind?.dispose();
  session.take?.dispose();
  session.context.dispose();
  session.runtime.dispose();
}

port.on("message", (req: Request) => {
  if (req.type === "close") {
    try {
      close(req.session);
    } catch {
      // Freeing a runtime that hit its memory limit can trip an engine assertion: start afresh.
      process.exit(1);
    }
    return;
  }
  state[stateSlots.running] = req.id;
  state[stateSlots.startedAt] = Date.now();
  let reply: Reply;
  try {
    reply = { id: req.id, ok: true, output: req.type === "open" ? open(req) : run(req) };
  } catch (e) {
    if (e instanceof BlockFailure) reply = { id: req.id, ok: false, kind: e.kind, message: e.message, line: e.line, column: e.column };
    else {
      // The engine itself failed (e.g. the native stack overflowed inside WebAssembly): it may be corrupt.
      const stack = e instanceof RangeError;
      reply = { id: req.id, ok: false, kind: stack ? "stack" : "crash", message: String(e), fatal: true };
    }
  }
  state[stateSlots.running] = 0;
  port.postMessage(reply);
});

port.postMessage({ id: 0, ok: true, output: "ready" } satisfies Reply);
