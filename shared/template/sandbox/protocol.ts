/**
 * Messages between the template renderer (main thread) and the sandbox worker thread.
 * The worker also writes `[id of the request it is running, its start time in ms]` into a
 * shared Float64Array, so the main thread's watchdog knows what is running and since when.
 */

/** Opens a session: one QuickJS runtime and context holding a frozen copy of the scope. */
export interface OpenRequest {
  type: "open";
  id: number;
  session: number;
  /** The render scope as JSON. */
  scope: string;
  memoryBytes: number;
  maxOutputBytes: number;
}

/** Runs one code block in a session. */
export interface RunRequest {
  type: "run";
  id: number;
  session: number;
  /** JavaScript source of the block. */
  code: string;
  /** JSON object of the loop names the block sees (`item`, `table`, `loop`). */
  bindings: string;
  /** The keys of `bindings`, declared as constants of the block. */
  names: string[];
  timeMs: number;
}

/** Frees a session (no reply). */
export interface CloseRequest {
  type: "close";
  session: number;
}

/** Any message the host sends. */
export type Request = OpenRequest | RunRequest | CloseRequest;

/** Why a block failed. */
export type FailureKind = "time" | "memory" | "stack" | "output" | "error" | "crash";

/** The worker's answer to an open or run request. */
export type Reply =
  | { id: number; ok: true; output: string }
  | {
      id: number;
      ok: false;
      kind: FailureKind;
      /** e.g. `TypeError: x is not a function`. */
      message: string;
      /** Position inside the block's code (1-based), when QuickJS reports one. */
      line?: number;
      column?: number;
      /** The worker's engine is no longer usable: the host must replace the worker. */
      fatal?: boolean;
    };

/** Slots of the shared state array the worker writes and the watchdog reads. */
export const stateSlots = { running: 0, startedAt: 1 } as const;
