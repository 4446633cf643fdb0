/**
 * The compile thread's side (compiler/pool.ts): checks a template, or plans its output paths,
 * and answers with plain data. A TemplateError becomes `{ok: false, issues}`, since only an
 * error's name and message survive the copy between threads.
 */
import type { MessagePort } from "node:worker_threads";
import { dict } from "../../dict.ts";
import { TemplateError } from "../errors.ts";
import { checkTemplate, planTemplate } from "../render.ts";
import type { CheckResult, PlanResult, TemplateIssue, TemplateSource } from "../types.ts";

export type CompileTask = { op: "check"; source: TemplateSource } | { op: "plan"; source: TemplateSource; scope: Record<string, unknown> };

/** A task as it reaches the thread: `started` is told when the work begins (its deadline starts). */
type StartedTask = CompileTask & { started: MessagePort };

export type CompileReply = { ok: true; check?: CheckResult; plan?: PlanResult } | { ok: false; issues: TemplateIssue[] };

export default function compileTask(task: StartedTask): CompileReply {
  task.started.postMessage(null);
  task.started.close();
  try {
    if (task.op === "check") return { ok: true, check: checkTemplate(task.source) };
    // The copy gave the scope Object.prototype; the web process built it prototype-less
    // (templates/scope.ts). Reads are own-property reads either way (access.ts).
    const scope = Object.assign(dict<unknown>(), task.scope);
    return { ok: true, plan: planTemplate({ ...task.source, scope, mode: "preview" }) };
  } catch (error) {
    if (error instanceof TemplateError) return { ok: false, issues: error.issues };
    throw error;
  }
}
