/**
 * A parse thread (see parsePool.ts): per message, parses one SQL text with the parser's own
 * deadline, or writes the DDL of a stored parse, or compares two stored parses (stored
 * parses arrive as JSON text and are checked against the model's schema here, off the
 * host's event loop). It says when it starts, then answers with the result, the parser's
 * one error (message, line, column), or a crash (a bug, reported as such).
 */
import { parentPort } from "node:worker_threads";
import { diffSchemas } from "../sqlddl/diff/diffSchemas.ts";
import { DdlParseError } from "../sqlddl/errors.ts";
import { exportSql } from "../sqlddl/export/exportSql.ts";
import { parseDdl } from "../sqlddl/parser.ts";
import { parsedSchemaSchema, type ParsedSchema } from "../sqlddl/types.ts";
import type { ParseReply, ParseRequest } from "./parsePool.ts";

const port = parentPort!;

const stored = (json: string): ParsedSchema => parsedSchemaSchema.parse(JSON.parse(json));

function answer(request: ParseRequest): ParseReply {
  switch (request.kind) {
    case "parse":
      return { ok: true, result: parseDdl(request.sqlText, request.dialect, { maxMs: request.maxMs }) };
    case "export":
      return { ok: true, text: exportSql(stored(request.parsedJson), request.dialect) };
    case "compare": {
      const diff = diffSchemas(stored(request.fromJson), stored(request.toJson), request.dialect);
      return { ok: true, text: JSON.stringify({ differences: diff.differences, migration_sql: diff.migration_sql, database_type: request.dialect }) };
    }
  }
}

port.on("message", (request: ParseRequest) => {
  port.postMessage({ started: true } satisfies ParseReply);
  let reply: ParseReply;
  try {
    reply = answer(request);
  } catch (error) {
    if (error instanceof DdlParseError) {
      reply = { ok: false, message: error.message.replace(/ \(line \d+, column \d+\)$/, ""), line: error.line, column: error.column };
    } else {
      reply = { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
  }
  port.postMessage(reply);
});
