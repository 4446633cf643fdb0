/**
 * Form window layout write benchmark (issue "Form designer"): `PUT /form-windows/{id}/layout`
 * with 200 elements through the whole stack (HTTP, token, validation of every element, field
 * placements checked against the parsed schema, then one statement that re-checks the version
 * and writes the delete, update and insert atomically), against a plain `delete` + multi-row `insert` of the same 200 rows over
 * a bare `pg` pool, in the same run. Target: ≥ 0.5× the plain writes per second.
 *
 * Two figures: a designer's usual write (every element sent back with its id after a drag:
 * 200 updates) and a full replacement (200 new elements: 200 deletes and 200 inserts).
 * Rounds alternate between the route and the baseline; each figure is the ratio of medians.
 * One untimed round of each comes first (JIT, the statements' generic plans, caches: the first
 * round of either side ran up to 1.5× slower), and rounds are ten writes long, so that a
 * burst of other work on the shared machine lands on rounds of both sides alike instead of
 * deciding a median of five (the same 100 timed writes per figure as before).
 *
 * The server runs in this process, so the client's CPU counts against the route: requests go
 * through node:http over one kept-alive socket (support/jsonClient.ts), not `fetch`, whose
 * own cost was ~2 ms per write. The baseline is unchanged: the same `pg` pool and statements.
 */
import pg from "pg";
import { buildAppDeps } from "../../api/appDeps.ts";
import { startWeb } from "../../api/server.ts";
import { createPool, ignoredRow, sql } from "../../shared/db/pool.ts";
import { EventHub } from "../../shared/events/hub.ts";
import { PgListener } from "../../shared/events/listener.ts";
import { createLogger } from "../../shared/logger.ts";
import { testConfig } from "../support/app.ts";
import { buildProject, buildUser, makePatron, tokenFor } from "../support/factories.ts";
import { buildSchema } from "../support/templateFactories.ts";
import { benchDatabase } from "./support/db.ts";
import { jsonClient } from "./support/jsonClient.ts";
import { ratioFigure, report } from "./report.ts";

const ELEMENTS = 200;
const ROUNDS = 10;
const WRITES_PER_ROUND = 10;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The 200 elements: a grid of field placements, buttons and separators inside a 900 × 600 window. */
function elements(shift: number): Record<string, unknown>[] {
  return Array.from({ length: ELEMENTS }, (_, i) => {
    const place = { x_position: (i % 10) * 85 + (shift % 5), y_position: Math.floor(i / 10) * 28, width: 80, height: 24, tab_order: i + 1 };
    if (i % 4 === 0) return { ...place, element_type: "button_save", button_label: `Save ${i}`, button_action: "save" };
    if (i % 4 === 1) return { ...place, element_type: "separator_horizontal" };
    return { ...place, element_type: "field_textinput", field_name: i % 2 ? "users.email" : "posts.title", control_type: "text" };
  });
}

const db = await benchDatabase();
const config = testConfig(db.url, { LOG_LEVEL: "silent", NODE_ENV: "production", METRICS_TOKEN: "bench-metrics-token", RATE_LIMIT_USER_PER_HOUR: "100000000" });
const log = createLogger("silent");
const pool = await createPool(db.url, { maxPoolSize: 10 });
const listener = new PgListener(db.url, log);
await listener.start();
const hub = new EventHub(listener, pool, log);
hub.start();
const web = await startWeb(await buildAppDeps({ config, pool, log, hub }), 0, "127.0.0.1");
const bare = new pg.Pool({ connectionString: db.url, max: 2 });
try {
  const base = `http://127.0.0.1:${web.port}`;
  const user = await buildUser(pool);
  await makePatron(pool, user.id);
  const token = await tokenFor(pool, user);
  const project = await buildProject(pool, user.id);
  await pool.query(sql.type(ignoredRow)`update projects set form_designer_snap_to_grid = false where id = ${project}`);
  const schema = await buildSchema(pool, project, user.id);
  const client = jsonClient(base, token);
  const call = async (method: string, path: string, body: unknown) => {
    const res = await client.call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.body;
  };
  const set = (await call("POST", "/api/form-sets", { name: "Bench", project_id: project, schema_id: schema })).form_set;
  const window = (await call("POST", "/api/form-windows", { form_set_id: set.id, name: "Grid", window_type: "data_table" })).form_window;
  let current = (await call("PUT", `/api/form-windows/${window.id}/layout`, { version: window.version, elements: elements(0) })).form_window;

  // The baseline's window holds the same rows.
  const plainWindow = (await call("POST", "/api/form-windows", { form_set_id: set.id, name: "Plain", window_type: "data_table" })).form_window.id as number;
  const columns = ["element_type", "x_position", "y_position", "width", "height", "tab_order", "button_label", "button_action", "field_name", "control_type"] as const;
  const plainWrite = async (rows: Record<string, unknown>[]) => {
    const client = await bare.connect();
    try {
      await client.query("begin");
      await client.query("delete from form_elements where form_window_id = $1", [plainWindow]);
      const params: unknown[] = [plainWindow];
      const tuples = rows.map((row) => `($1, ${columns.map((c) => `$${params.push(row[c] ?? null)}`).join(", ")})`);
      await client.query(`insert into form_elements (form_window_id, ${columns.join(", ")}) values ${tuples.join(", ")}`, params);
      await client.query("commit");
    } catch (error) {
      await client.query("rollback");
      throw error;
    } finally {
      client.release();
    }
  };

  let shift = 1;
  const drag = async () => {
    const ids = current.elements.map((e: { id: number }) => e.id);
    const next = elements(shift++).map((e, i) => ({ ...e, id: ids[i] }));
    current = (await call("PUT", `/api/form-windows/${window.id}/layout`, { version: current.version, elements: next })).form_window;
  };
  const replace = async () => {
    current = (await call("PUT", `/api/form-windows/${window.id}/layout`, { version: current.version, elements: elements(shift++) })).form_window;
  };
  const plainOne = () => plainWrite(elements(shift++));
  /** Mean ms per write of `WRITES_PER_ROUND` calls of `write`. */
  const round = async (write: () => Promise<void>) => {
    const started = performance.now();
    for (let n = 0; n < WRITES_PER_ROUND; n += 1) await write();
    return (performance.now() - started) / WRITES_PER_ROUND;
  };
  for (const write of [drag, replace, plainOne]) await round(write);

  const ours = { update: [] as number[], replace: [] as number[] };
  const plain: number[] = [];
  for (let n = 0; n < ROUNDS; n += 1) {
    ours.update.push(await round(drag));
    ours.replace.push(await round(replace));
    plain.push(await round(plainOne));
  }
  if (current.elements.length !== ELEMENTS) throw new Error(`the window holds ${current.elements.length} elements`);

  const perSecond = (ms: number) => 1000 / ms;
  report("Form window layout write: 200 elements (PUT /form-windows/{id}/layout vs plain delete + insert over pg)", [
    ratioFigure("forms.layout_update_vs_plain", perSecond(median(ours.update)), perSecond(median(plain)), "writes/s", 0.5,
      `every element sent back with its id (a drag): ${median(ours.update).toFixed(1)} ms per write vs ${median(plain).toFixed(1)} ms`),
    ratioFigure("forms.layout_replace_vs_plain", perSecond(median(ours.replace)), perSecond(median(plain)), "writes/s", 0.5,
      `200 new elements replacing 200: ${median(ours.replace).toFixed(1)} ms per write`),
  ]);
  client.close();
} finally {
  await web.stop();
  await bare.end();
  await listener.stop();
  await pool.end();
  await db.drop();
}
