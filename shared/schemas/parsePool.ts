/**
 * SQL parses off the event loop. `parseDdl` is synchronous and may run up to
 * SCHEMA_PARSE_TIMEOUT_MS (20 s by default). Run on a process's own thread, it would stall
 * everything else the process does for that long: in a worker, the heartbeat (so the
 * sweeper of another process takes the worker for dead after WORKER_STALE_AFTER_MS and
 * retries its jobs) and every other job; in the web process (bundle imports), every
 * request. So parses run on a few worker threads, and the calling thread only waits for a
 * message. The web process's SQL exports and schema comparisons run there too: reading a
 * 3,000-table parse back from its JSON and writing its DDL or migration takes hundreds of
 * milliseconds, so the host hands over the stored JSON text and gets text back.
 *
 * The parser checks its deadline between statements; a thread that still outlives the
 * deadline by `graceMs` is terminated and replaced, so the limit holds whatever the input.
 * Requests beyond the pool's size wait in order; a request's time limit starts when a
 * thread takes it.
 */
import os from "node:os";
import { Worker } from "node:worker_threads";
import { DdlParseError } from "../sqlddl/errors.ts";
import type { Dialect, ParseResult } from "../sqlddl/types.ts";

/** What the host sends a parse thread: a parse, an export or a comparison, within `maxMs`. */
export type ParseRequest =
  | { kind: "parse"; sqlText: string; dialect: Dialect; maxMs: number }
  /** `parsedJson`: a stored ParsedSchema as JSON text; the answer is DDL in `dialect`. */
  | { kind: "export"; parsedJson: string; dialect: Dialect; maxMs: number }
  /** Stored ParsedSchemas as JSON text; the answer is `{differences, migration_sql, database_type}` as JSON text. */
  | { kind: "compare"; fromJson: string; toJson: string; dialect: Dialect; maxMs: number };

/**
 * What a parse thread answers: that it started (the time limit runs from there, not from
 * the request, which a thread still loading the parser may take a while to pick up), then
 * the parse (or the text of an export or comparison), the parser's error, or a crash (a bug).
 */
export type ParseReply =
  | { started: true }
  | { ok: true; result: ParseResult }
  | { ok: true; text: string }
  | { ok: false; message: string; line: number; column: number }
  | { ok: false; crash: string };

interface Pending {
  request: ParseRequest;
  resolve: (reply: Extract<ParseReply, { ok: true }>) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  watchdog: NodeJS.Timeout | null;
}

/** Slack past the parser's own deadline before a thread is terminated (copying a large text in takes time too). */
const GRACE_MS = 1000;

/** Threads doing parses, started on demand, kept while idle (unreferenced, so they never hold a process open). */
export class ParsePool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Pending[] = [];

  private readonly size: number;
  private readonly graceMs: number;

  /** @param graceMs how long past a request's `maxMs` its thread may run before it is stopped */
  constructor(size: number, graceMs = GRACE_MS) {
    this.size = size;
    this.graceMs = graceMs;
  }

  /**
   * Runs `request` on a thread.
   * @throws DdlParseError as parseDdl does (also when the thread had to be stopped at the deadline),
   *   SchemaWorkTimeout when an export or comparison outlived its time
   */
  run(request: ParseRequest): Promise<Extract<ParseReply, { ok: true }>> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  /** Starts a thread ahead of the first parse (a thread takes a moment to load the parser). */
  warm(): void {
    if (this.slots.size === 0) this.idle.push(this.spawn());
  }

  private pump(): void {
    while (this.queue.length > 0 && (this.idle.length > 0 || this.slots.size < this.size)) {
      const slot = this.idle.pop() ?? this.spawn();
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL("./parseThread.ts", import.meta.url));
    const slot: Slot = { worker, job: null, watchdog: null };
    worker.on("message", (reply: ParseReply) => this.answer(slot, reply));
    worker.on("error", (error: Error) => this.drop(slot, error));
    worker.on("exit", () => this.drop(slot, new Error("the parse thread exited")));
    worker.unref();
    this.slots.add(slot);
    return slot;
  }

  private start(slot: Slot, job: Pending): void {
    slot.job = job;
    slot.worker.ref(); // a request in flight keeps the process up until it answers
    slot.worker.postMessage(job.request);
  }

  private answer(slot: Slot, reply: ParseReply): void {
    const job = slot.job;
    if (!job || !this.slots.has(slot)) return;
    if ("started" in reply) {
      slot.watchdog = setTimeout(() => {
        // Where the parser was is unknown; the error names the start of the text.
        this.drop(slot, job.request.kind === "parse" ? new DdlParseError("The SQL took too long to parse", 1, 1) : new SchemaWorkTimeout(job.request));
      }, job.request.maxMs + this.graceMs);
      return;
    }
    if (slot.watchdog) clearTimeout(slot.watchdog);
    slot.watchdog = null;
    slot.job = null;
    slot.worker.unref();
    this.idle.push(slot);
    if (reply.ok) job.resolve(reply);
    else if ("crash" in reply) job.reject(new Error(`the schema thread failed (${job.request.kind}): ${reply.crash}`));
    else job.reject(new DdlParseError(reply.message, reply.line, reply.column));
    this.pump();
  }

  /** Ends a thread (overrun, crash or exit); its request, if any, fails with `error`. */
  private drop(slot: Slot, error: Error): void {
    if (!this.slots.delete(slot)) return;
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    if (slot.watchdog) clearTimeout(slot.watchdog);
    slot.job?.reject(error);
    slot.job = null;
    void slot.worker.terminate();
    this.pump();
  }
}

/** The process's parse threads: as many as there are cores, at most four. */
export const parsePool = new ParsePool(Math.max(1, Math.min(4, os.availableParallelism())));

/** An export or comparison that outlived its time limit; its thread was stopped. */
export class SchemaWorkTimeout extends Error {
  constructor(request: ParseRequest) {
    super(`The ${request.kind === "export" ? "SQL export" : "comparison"} took longer than ${request.maxMs / 1000} s`);
    this.name = "SchemaWorkTimeout";
  }
}

/**
 * Parses DDL on a parse thread within `maxMs` (see the module comment).
 * @throws DdlParseError when the input is empty, binary, not understood, or too slow to parse
 */
export async function parseOffThread(sqlText: string, dialect: Dialect, maxMs: number): Promise<ParseResult> {
  const reply = await parsePool.run({ kind: "parse", sqlText, dialect, maxMs });
  if (!("result" in reply)) throw new Error("the parse thread answered a parse with text");
  return reply.result;
}

/**
 * DDL in `dialect` of a stored parse (its JSON text), written on a parse thread.
 * @throws SchemaWorkTimeout after `maxMs`
 */
export function exportOffThread(parsedJson: string, dialect: Dialect, maxMs: number): Promise<string> {
  return textOf(parsePool.run({ kind: "export", parsedJson, dialect, maxMs }));
}

/**
 * `{differences, migration_sql, database_type}` of two stored parses as JSON text,
 * computed on a parse thread.
 * @throws SchemaWorkTimeout after `maxMs`
 */
export function compareOffThread(fromJson: string, toJson: string, dialect: Dialect, maxMs: number): Promise<string> {
  return textOf(parsePool.run({ kind: "compare", fromJson, toJson, dialect, maxMs }));
}

async function textOf(reply: Promise<Extract<ParseReply, { ok: true }>>): Promise<string> {
  const answer = await reply;
  if (!("text" in answer)) throw new Error("the parse thread answered with a parse instead of text");
  return answer.text;
}

/** The parser's error as a field message: "Line 3, column 7: expected a column name." */
export const parseProblem = (error: DdlParseError) =>
  `Line ${error.line}, column ${error.column}: ${error.message.replace(/ \(line \d+, column \d+\)$/, "")}.`;
