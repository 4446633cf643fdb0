/**
 * A render's code-block session: opened on the first code block the render meets (so
 * templates without code blocks never touch the sandbox), holding one QuickJS context with the
 * render's scope for all its blocks, and closed when the render ends.
 */
import type { CodeSite } from "../codegen.ts";
import { fail, TemplateError } from "../errors.ts";
import type { TemplateLimits } from "../types.ts";
import { sandboxHost, SandboxRestarted, type SandboxHost } from "./host.ts";
import type { FailureKind, Reply } from "./protocol.ts";

/** A code block that failed, with why (`error` when its code threw; the others are limits). */
export class BlockError extends TemplateError {
  readonly kind: FailureKind;

  constructor(kind: FailureKind, issue: TemplateError["issues"][number]) {
    super([issue]);
    this.name = "BlockError";
    this.kind = kind;
  }
}

let nextSession = 1;
/** Time allowed to copy the scope into a new session. */
const openTimeMs = 10_000;

const mb = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

/** A short, one-line excerpt of a block, to name it in messages. */
const excerpt = (source: string) => {
  const line = source.trim().split("\n")[0] ?? "";
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
};

/** Code blocks of one render. */
export class CodeSession {
  private id = 0;
  private generation = -1;
  /** The pool thread this render's session lives on, taken at its first block. */
  private host: SandboxHost | null = null;
  private scopeJson: string | null = null;
  private readonly scope: Record<string, unknown>;
  private readonly limits: TemplateLimits;

  /** End of the render's total budget (epoch ms): thousands of blocks within their own limit must not hold the sandbox for minutes. */
  private readonly deadline: number;

  constructor(scope: Record<string, unknown>, limits: TemplateLimits) {
    this.scope = scope;
    this.limits = limits;
    this.deadline = limits.deadline ?? Date.now() + limits.renderTimeMs;
  }

  /** Runs a block with the loop names it sees; resolves with the text it inserts. @throws TemplateError naming the block */
  async run(block: CodeSite, bindings: Record<string, unknown>): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        const left = this.deadline - Date.now();
        if (left <= 0) this.overBudget(block);
        // A block gets its own limit, or what is left of the render's budget when that is less.
        const timeMs = Math.max(1, Math.min(this.limits.timeMs, left));
        const host = (this.host ??= sandboxHost.acquire());
        if (this.generation !== host.generation || this.id === 0) await this.open(block, host);
        const reply = await host.request(
          { type: "run", session: this.id, code: block.source, bindings: JSON.stringify(bindings), names: Object.keys(bindings), timeMs },
          timeMs,
        );
        if (reply.ok) return reply.output;
        if (reply.kind === "time" && timeMs < this.limits.timeMs) this.overBudget(block);
        return this.fail(block, reply);
      } catch (e) {
        // Another render's block got the worker replaced: our session went with it; reopen once.
        if (e instanceof SandboxRestarted && attempt < 2) continue;
        if (e instanceof SandboxRestarted) return fail(block.pos.file, block.pos.line, block.pos.column, `Code block \`${excerpt(block.source)}\` could not run: ${e.message}.`);
        throw e;
      }
    }
  }

  private async open(block: CodeSite, host: SandboxHost): Promise<void> {
    if (this.id !== 0) host.close(this.id, this.generation);
    this.scopeJson ??= JSON.stringify(this.scope);
    this.id = nextSession++;
    this.generation = host.generation;
    const reply = await host.request(
      { type: "open", session: this.id, scope: this.scopeJson, memoryBytes: this.limits.memoryBytes, maxOutputBytes: this.limits.maxOutputBytes },
      openTimeMs,
    );
    if (!reply.ok) {
      const why = reply.kind === "memory" ? `the scope does not fit in the sandbox memory limit of ${mb(this.limits.memoryBytes)}` : reply.message;
      fail(block.pos.file, block.pos.line, block.pos.column, `Code block \`${excerpt(block.source)}\` could not start: ${why}.`);
    }
  }

  private overBudget(block: CodeSite): never {
    throw new BlockError("time", {
      file: block.pos.file,
      line: block.pos.line,
      column: block.pos.column,
      message: `The render exceeded its total time limit of ${this.limits.renderTimeMs} ms (at \`${excerpt(block.source)}\`).`,
    });
  }

  private fail(block: CodeSite, reply: Extract<Reply, { ok: false }>): never {
    const name = `Code block \`${excerpt(block.source)}\``;
    const messages: Record<typeof reply.kind, string> = {
      time: `${name} exceeded its time limit of ${this.limits.timeMs} ms.`,
      memory: `${name} exceeded its memory limit of ${mb(this.limits.memoryBytes)}.`,
      stack: `${name} exceeded its stack limit (recursion too deep).`,
      output: `${name} printed more than ${this.limits.maxOutputBytes} characters.`,
      error: `${name} failed: ${reply.message}`,
      crash: `${name} stopped the sandbox: ${reply.message}`,
    };
    let { line, column } = block.pos;
    if (reply.line !== undefined) {
      line = block.codePos.line + reply.line - 1;
      column = reply.line === 1 ? block.codePos.column + (reply.column ?? 1) - 1 : (reply.column ?? 1);
    }
    throw new BlockError(reply.kind, { file: block.pos.file, line, column, message: messages[reply.kind] });
  }

  /** Frees the session's QuickJS context and gives its thread back to the pool. */
  close(): void {
    if (this.host && this.id !== 0) this.host.close(this.id, this.generation);
    if (this.host) sandboxHost.release(this.host);
    this.host = null;
    this.id = 0;
  }
}
