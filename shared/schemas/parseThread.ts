/**
 * A parse thread (see parsePool.ts): parses one SQL text per message with the parser's own
 * deadline; says when it starts, then answers with the result, the parser's one error (message, line, column), or
 * a crash (a bug in the parser, reported as such).
 */
import { parentPort } from "node:worker_threads";
import { DdlParseError } from "../sqlddl/errors.ts";
import { parseDdl } from "../sqlddl/parser.ts";
import type { ParseReply, ParseRequest } from "./parsePool.ts";

const port = parentPort!;

port.on("message", (request: ParseRequest) => {
  port.postMessage({ started: true } satisfies ParseReply);
  let reply: ParseReply;
  try {
    reply = { ok: true, result: parseDdl(request.sqlText, request.dialect, { maxMs: request.maxMs }) };
  } catch (error) {
    if (error instanceof DdlParseError) {
      reply = { ok: false, message: error.message.replace(/ \(line \d+, column \d+\)$/, ""), line: error.line, column: error.column };
    } else {
      reply = { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
  }
  port.postMessage(reply);
});
