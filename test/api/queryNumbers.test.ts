/**
 * Numbers in query strings (and ids that a JSON body may give as text) are read in canonical
 * decimal form only: "1e2", "0x10", " 2", "+2", "02", "2.0" and an empty value are a 422 on
 * their field, not page 100, page 16, page 2 or a silent 0. Canonical values and the
 * defaults of absent parameters work as before, and the OpenAPI document still describes the
 * parameters as integers and numbers with their bounds.
 */
import fc from "fast-check";
import t, { type Test } from "tap";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client, type ApiResponse } from "../support/http.ts";
import { valueOf, type JsonSchema } from "../support/fuzz/schemaArbitrary.ts";
import { catalogueEntry } from "../support/storeCatalogue.ts";
import { buildSeller, seedCatalogue } from "../support/storeFactories.ts";

/** Malformed spellings of 2 (or of `id`), as they stand in a URL. */
const malformedWhole = (id = 2) => [`${id}e0`, `0x${id.toString(16)}`, `%20${id}`, `${id}%20`, `%2B${id}`, `0${id}`, `${id}.0`, "", "-1", "two"];

const wholeMessage = /must be a whole number written in digits/;

/** Checks that `res` is a 422 naming `field` (and only it) with the digits message. */
function refused(t: Test, res: ApiResponse, field: string, message: RegExp, what: string) {
  t.equal(res.status, 422, `${what}: 422`);
  t.equal(res.body?.code, "validation_failed", `${what}: validation_failed`);
  t.same(Object.keys(res.body?.errors ?? {}), [field], `${what}: the error is on ${field}`);
  t.match(res.body?.errors?.[field]?.[0], message, `${what}: says what the field must be`);
}

t.test("numbers in query strings are read in canonical decimal form only", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  for (let i = 0; i < 3; i++) await buildProject(app.pool, user.id, { name: `Project ${i}` });

  await t.test("a paginated list: page and per_page", async (t) => {
    const absent = await api.get("/api/projects");
    t.equal(absent.status, 200, absent.text);
    t.equal(absent.body.meta.current_page, 1, "page defaults to 1");
    t.equal(absent.body.meta.per_page, 15, "per_page defaults to 15");
    t.equal(absent.body.data.length, 3);

    const second = await api.get("/api/projects?page=2&per_page=2");
    t.equal(second.status, 200, second.text);
    t.equal(second.body.meta.current_page, 2, "page=2 is page 2");
    t.equal(second.body.meta.per_page, 2);
    t.equal(second.body.data.length, 1);

    for (const spelling of malformedWhole()) {
      refused(t, await api.get(`/api/projects?page=${spelling}&per_page=2`), "page", wholeMessage, `page=${spelling}`);
      refused(t, await api.get(`/api/projects?per_page=${spelling}`), "per_page", wholeMessage, `per_page=${spelling}`);
    }
    refused(t, await api.get("/api/projects?page=1&page=2"), "page", wholeMessage, "page given twice");
    const tooBig = await api.get("/api/projects?per_page=101");
    t.equal(tooBig.status, 422, "the bounds still apply");
    t.match(tooBig.body.errors.per_page[0], /must not be greater than 100/);
  });

  await t.test("store search: price_min, price_max, page and rows", async (t) => {
    const seller = await buildSeller(app);
    const entry = (name: string, price_type: "euros" | "credits" | "free", price: number) => ({ ...catalogueEntry(0), name, price_type, price });
    await seedCatalogue(app.pool, seller.user.id, [entry("Cheap", "euros", 0.49), entry("Dear", "euros", 0.99), entry("Credits", "credits", 3), entry("Free", "free", 0)]);
    const names = (res: ApiResponse) => (res.body.data as { name: string }[]).map((row) => row.name).sort();

    const absent = await api.get("/api/store/templates");
    t.equal(absent.status, 200, absent.text);
    t.same(absent.body.meta, { current_page: 1, rows: 12, total: 4, last_page: 1 }, "page 1 and 12 rows by default");

    const half = await api.get("/api/store/templates?price_min=0.5");
    t.equal(half.status, 200, half.text);
    t.same(names(half), ["Credits", "Dear"], "price_min=0.5 is half a unit");
    const upTo = await api.get("/api/store/templates?price_min=0&price_max=0.50");
    t.same(names(upTo), ["Cheap", "Free"], "a fraction with a trailing zero, and 0");

    const second = await api.get("/api/store/templates?page=2&rows=1&sort=newest");
    t.equal(second.status, 200, second.text);
    t.same(second.body.meta, { current_page: 2, rows: 1, total: 4, last_page: 4 });
    t.equal(second.body.data.length, 1);

    const decimalMessage = /must be a number written in digits/;
    for (const spelling of ["", ".5", "5.", "1e1", "0x1", "%2B1", "%201", "01", "00.5", "-1", "1,5", "NaN", "Infinity"]) {
      refused(t, await api.get(`/api/store/templates?price_min=${spelling}`), "price_min", decimalMessage, `price_min=${spelling}`);
      refused(t, await api.get(`/api/store/templates?price_max=${spelling}`), "price_max", decimalMessage, `price_max=${spelling}`);
    }
    for (const spelling of malformedWhole()) {
      refused(t, await api.get(`/api/store/templates?page=${spelling}`), "page", wholeMessage, `page=${spelling}`);
      refused(t, await api.get(`/api/store/templates?rows=${spelling}`), "rows", wholeMessage, `rows=${spelling}`);
    }
  });

  await t.test("administrators' id filters, and an id a JSON body gives as text", async (t) => {
    const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
    const asAdmin = client(app.url, admin.token);
    const created = await api.post("/api/support-tickets", { subject: "Numbers", body: "Which page am I on?", category: "technical", priority: "low" });
    t.equal(created.status, 201, created.text);
    const ticketId = created.body.ticket.id as number;

    for (const spelling of malformedWhole(admin.user.id)) {
      refused(t, await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { assigned_to: decodeURIComponent(spelling) }), "assigned_to", wholeMessage, `body assigned_to "${spelling}"`);
    }
    const asText = await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { assigned_to: String(admin.user.id) });
    t.equal(asText.status, 200, asText.text);
    t.equal(asText.body.ticket.assigned_to, admin.user.id, "a canonical digit string is the id");
    const asNumber = await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { assigned_to: admin.user.id });
    t.equal(asNumber.status, 200, "a JSON number is taken as it is");

    const listed = await asAdmin.get(`/api/admin/support-tickets?assigned_to=${admin.user.id}`);
    t.equal(listed.status, 200, listed.text);
    t.equal(listed.body.meta.total, 1);
    const audit = await asAdmin.get(`/api/admin/audit-log?subject_type=support_ticket&subject_id=${ticketId}&actor_id=${admin.user.id}`);
    t.equal(audit.status, 200, audit.text);
    t.equal(audit.body.data.length, 2, "both assignments, filtered by canonical ids");
    for (const spelling of malformedWhole(ticketId)) {
      refused(t, await asAdmin.get(`/api/admin/support-tickets?assigned_to=${spelling}`), "assigned_to", wholeMessage, `assigned_to=${spelling}`);
      refused(t, await asAdmin.get(`/api/admin/audit-log?subject_id=${spelling}`), "subject_id", wholeMessage, `subject_id=${spelling}`);
      refused(t, await asAdmin.get(`/api/admin/audit-log?actor_id=${spelling}`), "actor_id", wholeMessage, `actor_id=${spelling}`);
    }
  });

  await t.test("a deployment environment's config takes its numbers as JSON numbers or canonical digits", async (t) => {
    const projectId = await buildProject(app.pool, user.id, { name: "Deploys" });
    const ftp = { host: "ftp.example.com", username: "deploy", password: "Secret-Pass-123", remote_path: "/www" };
    const ssh = { host: "ssh.example.com", username: "deploy", auth_method: "password", password: "Secret-Pass-123", remote_path: "/srv/app" };
    for (const spelling of ["2e1", "0x15", " 21", "+21", "021", "21.0", ""]) {
      refused(t, await api.post(`/api/projects/${projectId}/environments`, { name: "Live", type: "production", ftp_config: { ...ftp, port: spelling } }), "ftp_config.port", wholeMessage, `ftp port "${spelling}"`);
      refused(t, await api.post(`/api/projects/${projectId}/environments`, { name: "Live", type: "production", ssh_config: { ...ssh, keep_releases: spelling } }), "ssh_config.keep_releases", wholeMessage, `keep_releases "${spelling}"`);
    }
    const asText = await api.post(`/api/projects/${projectId}/environments`, { name: "Text", type: "production", ftp_config: { ...ftp, port: "2121" } });
    t.equal(asText.status, 201, asText.text);
    t.equal(asText.body.environment.ftp_config.port, 2121, "canonical digits are the port");
    const absent = await api.post(`/api/projects/${projectId}/environments`, { name: "Default", type: "staging", ssh_config: ssh });
    t.equal(absent.status, 201, absent.text);
    t.equal(absent.body.environment.ssh_config.port, 22, "an absent port is 22");
  });

  await t.test("the OpenAPI document still shows integers and numbers with their bounds", async (t) => {
    const doc = await client(app.url).get("/api/openapi.json");
    t.equal(doc.status, 200);
    const param = (path: string, name: string) =>
      (doc.body.paths[path].get.parameters as { name: string; in: string; schema: unknown }[]).find((p) => p.in === "query" && p.name === name)?.schema;
    t.same(param("/api/projects", "page"), { default: 1, type: "integer", minimum: 1, maximum: 100_000 });
    t.same(param("/api/projects", "per_page"), { default: 15, type: "integer", minimum: 1, maximum: 100 });
    t.same(param("/api/store/templates", "price_min"), { type: "number", minimum: 0, maximum: 10_000_000 });
    t.same(param("/api/store/templates", "rows"), { default: 12, type: "integer", minimum: 1, maximum: 100 });
    t.same(param("/api/admin/audit-log", "subject_id"), { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  });

  await t.test("every numeric query parameter of the document refuses a non-canonical spelling", async (t) => {
    const doc = (await client(app.url).get("/api/openapi.json")).body as JsonSchema;
    const resolve = (ref: string) => doc.components.schemas[ref.replace("#/components/schemas/", "")] as JsonSchema | undefined;
    const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
    const asAdmin = client(app.url, admin.token);
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string; in: string; schema: JsonSchema }[] }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const parameters = operation.parameters ?? [];
        // Path parameters take a value their schema allows, so that the request reaches the query's validation.
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => {
          const schema = parameters.find((p) => p.in === "path" && p.name === name)?.schema;
          return encodeURIComponent(String(fc.sample(valueOf(schema, resolve), { numRuns: 1, seed: 1 })[0]));
        });
        for (const { name, schema } of parameters.filter((p) => p.in === "query" && (p.schema.type === "integer" || p.schema.type === "number"))) {
          const res = await asAdmin[method as "get"](`${url}?${name}=1e0`);
          t.equal(res.status, 422, `${method.toUpperCase()} ${path}?${name}=1e0: 422 (${res.text.slice(0, 200)})`);
          t.match(res.body?.errors?.[name]?.[0], /written in digits/, `${method.toUpperCase()} ${path}: ${name} (${String(schema.type)}) says it must be written in digits`);
          checked++;
        }
      }
    }
    t.ok(checked >= 50, `${checked} query parameters checked`);
  });
});
