/**
 * The OpenAPI document as clients use it (issue 14, item 2): it validates against the
 * OpenAPI 3.1 schema with a maintained validator, every `$ref` in it resolves (zod's own
 * `#/$defs/…` references once pointed at the document's root, where nothing was), and a real
 * client generator (openapi-typescript) turns it into TypeScript that the compiler accepts.
 */
import t from "tap";
import { Validator } from "@seriousme/openapi-schema-validator";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { startTestApp } from "../support/app.ts";
import { request } from "../support/http.ts";

/** Every `$ref` value in `value`, with where it sits. */
function refsIn(value: unknown, at = "#", found: { at: string; ref: string }[] = []): { at: string; ref: string }[] {
  if (Array.isArray(value)) value.forEach((item, i) => refsIn(item, `${at}/${i}`, found));
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.push({ at, ref: item });
      else refsIn(item, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, found);
    }
  }
  return found;
}

/** The value a local JSON pointer (`#/a/b`) names in `doc`, or undefined. */
function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = doc;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

t.test("GET /api/openapi.json", async (t) => {
  const app = await startTestApp(t);
  const res = await request(app.url, "GET", "/api/openapi.json");
  t.equal(res.status, 200);
  const doc = res.body;

  t.test("validates against the OpenAPI 3.1 schema", async (t) => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    t.equal(validator.version, "3.1", "read as OpenAPI 3.1");
    t.ok(result.valid, `valid: ${JSON.stringify(result.errors ?? []).slice(0, 2000)}`);
    t.doesNotThrow(() => validator.resolveRefs(), "and every reference dereferences");
  });

  t.test("every $ref points at something in the document itself", async (t) => {
    const refs = refsIn(doc);
    t.ok(refs.length > 0, `the document shares definitions (${refs.length} references)`);
    const broken = refs.filter(({ ref }) => resolvePointer(doc, ref) === undefined);
    t.same(broken, [], "no reference is left dangling");
    t.notOk(JSON.stringify(doc).includes('"$defs"'), "no definitions are left inside operations");
    t.same(new Set(refs.map((r) => r.ref.replace(/[^/]+$/, ""))), new Set(["#/components/schemas/"]), "they all live in components.schemas");
    t.ok(doc.components.schemas.JsonValue, "the JSON value of template variables is one shared definition");
    t.ok(doc.components.schemas.TreeNode, "and so is the folder tree node");
  });

  t.test("operation ids are unique", async (t) => {
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    t.equal(new Set(ids).size, ids.length, `${ids.length} operations, no id twice`);
  });

  t.test("openapi-typescript generates a client whose types compile", async (t) => {
    const source = astToString(await openapiTS(structuredClone(doc)));
    t.match(source, /"\/api\/projects\/\{projectId\}\/templates\/\{templateId\}\/values": \{/, "the template values route is typed");
    t.match(source, /JsonValue:/, "with the shared JSON value type");
    const file = "client.d.ts";
    const host = ts.createCompilerHost({});
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => (name === file ? source : readFile(name));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === file || fileExists(name);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version) => (name === file ? ts.createSourceFile(file, source, version) : getSourceFile(name, version));
    const program = ts.createProgram([file], { strict: true, noEmit: true, types: [], lib: ["lib.es2022.d.ts"], skipLibCheck: true }, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    t.same(problems, [], "the TypeScript compiler finds nothing wrong");
  });
});
