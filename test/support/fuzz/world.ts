/**
 * The fixture world one fuzzed operation runs in: an owner (also a site administrator, so
 * the admin routes are reachable) holding the resources the operation's path names, a
 * stranger holding nothing, and a victim user (a team member, the target of the admin user
 * routes and of token deletion). Consecutive operations share a world until a request of
 * theirs writes anything (the fuzz reads its write log), then the next operation gets a new
 * one, so no request of one operation (a delete, a logout, a lock) can break another's
 * fixtures; resources are made on first use, with what they depend on, so a world costs only
 * what its operations name. A fixture that changes what the next operation would meet (the
 * owner's 2FA turned on, the world's job failed) makes the world serve its operation alone
 * (`spoil`). What only a job would make (a failed or finished deployment, a failed job, a
 * parsed SQL text) is made through the API where it can be, then set as the job leaves it:
 * the fuzz's server runs no worker.
 *
 * For the project-state fuzz the world puts its project into a state that refuses changes
 * (`setProjectState`) once an operation's fixtures exist; a fixture made through the API
 * later brings the project back to normal first, and each resource remembers what it was
 * made in, so `inProject` tells which operations live inside the project.
 *
 * Path parameters are filled by the path segment before them and their name; a parameter
 * the world does not know (a route added since) gets a small id, which still exercises its
 * validation and its not-found path.
 */
import { z } from "zod";
import { createPersonalToken } from "../../../shared/auth/personalTokens.ts";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { buildGeneration } from "../deploymentFactories.ts";
import { buildProject, buildTeam, buildUser, makePatron, setProjectState, tokenFor, type ProjectStateName } from "../factories.ts";
import { request } from "../http.ts";
import { buildGenerator, buildSchema, buildTemplate } from "../templateFactories.ts";
import { png, textFile, upload } from "./sampleFiles.ts";
import { emailHash } from "../../../shared/auth/emailVerification.ts";
import { parseDdl } from "../../../shared/sqlddl/parser.ts";
import type { PaypalStandIn } from "../peers/paypalPeer.ts";
import type { StripeStandIn } from "../peers/stripePeer.ts";
import { ACCOUNT_ROUTE_KINDS, makeAccountFixture, ownerPasswordHash } from "./accountFixtures.ts";
import { STORE_OPEN_ROUTES, STORE_ROUTE_KINDS, StoreFixtures } from "./storeFixtures.ts";

const idRow = z.object({ id: z.number() });

/** A person of the world and their bearer token. */
export interface Person {
  id: number;
  token: string;
}

/**
 * What a module of fixtures (`storeFixtures.ts`, `accountFixtures.ts`) makes a world's
 * resources with: the owner, the victim, the kinds it depends on, and API calls.
 */
export interface FixtureContext {
  pool: DatabasePool;
  owner: Person & { email: string };
  victimId: number;
  need(kind: string): Promise<number>;
  /**
   * Sends `body` (JSON, or a FormData as multipart) as the owner or `token`'s holder and picks
   * the new resource's id from the answer; undefined (the kind noted missing) when the answer
   * is not a success, or not `expect` where another status is the one that makes the fixture.
   */
  call(kind: string, method: string, path: string, body: unknown, pick: (b: any) => number, options?: { token?: string; expect?: number }): Promise<number | undefined>;
  /** Keeps values the API gave with a made resource (a signed link's query, a join code), for `World.notes`. */
  note(kind: string, values: Record<string, string>): void;
  /** The values noted with the world's resource of `kind` (made on first use). */
  notes(kind: string): Promise<Record<string, string> | undefined>;
  /** What the service signs with and who its first-party OAuth client is: the fuzz signs links as the service's e-mails do. */
  secrets: WorldSecrets;
  /**
   * Says a fixture changed what the next operation would meet (the owner's account: 2FA on, a
   * pending change; a shared fixture's state): the world serves this operation only.
   */
  spoil(): void;
}

/** The service's secrets a world needs for its account fixtures (from the test app's configuration), and its payment providers' stand-ins. */
export interface WorldSecrets {
  appKey: Buffer;
  frontendUrl: string;
  oauthClient: { id: string; secret: string };
  stripe: StripeStandIn;
  paypal: PaypalStandIn;
}

/**
 * Routes anyone may use on the owner's resources, as `METHOD /documented/path`, besides the
 * store's (`STORE_OPEN_ROUTES`): a stranger's success there is no leak.
 */
const OPEN_ROUTES: RegExp[] = [
  ...STORE_OPEN_ROUTES,
  /^GET \/api\/template-media\/\{id\}$/, // public by design: media of templates shown in the store and in pages
  /^GET \/api\/attachments\/\{id\}\/download$/, // the signed link is the credential, not the token
];

/** World kinds by parameter name. */
const BY_NAME: Record<string, string> = {
  projectId: "project",
  schemaId: "schema",
  templateId: "template",
  variableId: "variable",
  fileId: "file",
  translationId: "translation",
  teamId: "team",
  userId: "victim",
  formId: "projectForm",
  fieldId: "projectFormField",
  reportId: "projectReport",
  imageId: "reportImage",
  cardId: "card",
  threadId: "thread",
  messageId: "message",
};

/** World kinds of an `{id}` by the path segment before it. */
const BY_SEGMENT: Record<string, string> = {
  "api-tokens": "victimToken",
  generators: "generator",
  templates: "topTemplate",
  "code-generations": "generation",
  archives: "archive",
  subscriptions: "subscription",
  "code-adjustments": "adjustment",
  "template-media": "templateMedia",
  environments: "environment",
  deployments: "deployment",
  "deployment-logs": "deploymentLog",
  webhooks: "webhook",
  jobs: "job",
  "sql-parse": "sqlParse",
  verify: "owner",
  users: "victim",
  "kanban-boards": "board",
  "kanban-columns": "column",
  "kanban-cards": "card",
  "kanban-labels": "label",
  comments: "comment",
  assignees: "assignee",
  messages: "message",
  attachments: "attachment",
  "form-sets": "formSet",
  "form-windows": "formWindow",
  "form-elements": "formElement",
};

/**
 * The `{id}` of routes that act on a job or a deployment in one state only: what the worker
 * leaves behind (the fuzz runs none), set on fixtures made through the API.
 */
const STATE_ROUTE_KINDS: [RegExp, string][] = [
  [/^\/api\/admin\/jobs\/\{id\}\/retry$/, "failedJob"],
  [/^\/api\/deployments\/\{id\}\/retry$/, "failedDeployment"],
  [/^\/api\/deployments\/\{id\}\/rollback$/, "deployedLatest"],
];

/** World kinds of an `{id}` by documented path, before `BY_SEGMENT`: where one segment (`templates`) names several kinds. */
const BY_ROUTE: [RegExp, string][] = [...STORE_ROUTE_KINDS, ...ACCOUNT_ROUTE_KINDS, ...STATE_ROUTE_KINDS];

/** The world kind of each path parameter of `path` (undefined: one the world does not know). */
function kindsOf(path: string, params: string[]): [string, string | undefined][] {
  const segments = path.split("/");
  return params.map((name) => {
    const before = segments[segments.indexOf(`{${name}}`) - 1] ?? "";
    return [name, name === "id" ? (BY_ROUTE.find(([route]) => route.test(path))?.[1] ?? BY_SEGMENT[before]) : BY_NAME[name]];
  });
}

/** The people and resources of one or more consecutive operations. */
export class World {
  readonly owner: Person & { email: string };
  readonly stranger: Person;
  /** Kinds whose creation the API refused, with its answer (their parameters fall back to small ids). */
  readonly missing: string[] = [];
  private readonly made = new Map<string, Promise<number | undefined>>();
  /** Values the API gave with a made resource, by kind (an attachment's signed link, a project's join code). */
  private readonly noted = new Map<string, Record<string, string>>();
  /** The kinds each made kind was made in (a schema in the project, a variable in a template…). */
  private readonly parents = new Map<string, string[]>();
  private readonly pool: DatabasePool;
  private readonly baseUrl: string;
  private readonly victimId: number;
  /** The state the project was last put in: a shared world's next operation may need fixtures the API refuses in it. */
  private projectState: ProjectStateName = "normal";
  private readonly store: StoreFixtures;
  private readonly context: FixtureContext;
  /** Whether a fixture changed what the next operation would meet (`FixtureContext.spoil`). */
  private spoiled = false;

  private constructor(pool: DatabasePool, baseUrl: string, secrets: WorldSecrets, owner: Person & { email: string }, stranger: Person, victimId: number) {
    this.pool = pool;
    this.baseUrl = baseUrl;
    this.owner = owner;
    this.stranger = stranger;
    this.victimId = victimId;
    this.context = {
      pool,
      owner,
      victimId,
      secrets,
      need: (kind) => this.need(kind),
      call: (...args) => this.call(...args),
      note: (kind, values) => this.noted.set(kind, values),
      notes: (kind) => this.notes(kind),
      spoil: () => {
        this.spoiled = true;
      },
    };
    this.store = new StoreFixtures(this.context);
  }

  /**
   * Whether the next operation may run in this world too when this one wrote nothing: not
   * after a fixture changed the owner's account or another kind's state (`FixtureContext.spoil`).
   */
  get reusable(): boolean {
    return !this.spoiled;
  }

  /** A world with its three people; the owner signs in with `OWNER_PASSWORD`. */
  static async create(pool: DatabasePool, baseUrl: string, secrets: WorldSecrets): Promise<World> {
    // Global settings are shared by every world: a fuzzed PUT /admin/settings may have closed
    // registration, started maintenance or raised the payout minimum beyond any seller's
    // earnings; each operation starts from the defaults again.
    await pool.query(sql.type(z.object({}))`
      update global_settings set registration_open = true, maintenance_enabled = false, upload_limit_bytes = null, payout_minimum_cents = null
      where not registration_open or maintenance_enabled or upload_limit_bytes is not null or payout_minimum_cents is not null`);
    const owner = await buildUser(pool, { roles: ["admin", "developer"], passwordHash: await ownerPasswordHash() });
    const stranger = await buildUser(pool);
    const victim = await buildUser(pool);
    await makePatron(pool, owner.id); // the form designer is a patron feature
    return new World(pool, baseUrl, secrets, { id: owner.id, email: owner.email, token: await tokenFor(pool, owner) }, { id: stranger.id, token: await tokenFor(pool, stranger) }, victim.id);
  }

  /** The value of each path parameter of `path`, and whether each named a resource of the world (which a stranger must not reach). */
  async pathParams(path: string, params: string[]): Promise<{ values: Record<string, string>; allKnown: boolean }> {
    const values: Record<string, string> = {};
    let allKnown = true;
    for (const [name, kind] of kindsOf(path, params)) {
      const id = kind ? await this.id(kind) : undefined;
      if (id === undefined) allKnown = false;
      // `{hash}` is the hash of the owner's e-mail address in a verification link (the only route with one).
      values[name] = id !== undefined ? String(id) : name === "hash" ? emailHash(this.owner.email) : "1";
    }
    return { values, allKnown };
  }

  /** Whether a stranger may use `method` `path` on the owner's resources (`OPEN_ROUTES`). */
  isOpen(method: string, path: string): boolean {
    return OPEN_ROUTES.some((route) => route.test(`${method} ${path}`));
  }

  /**
   * Whether the path, or the body with the kinds `named` (`bodyHints.ts`), names the world's
   * project or a resource made inside it (once they are made): the operations a project's
   * state may refuse.
   */
  inProject(path: string, params: string[], named: string[] = []): boolean {
    const inside = (kind: string): boolean => kind === "project" || (this.parents.get(kind) ?? []).some(inside);
    return [...kindsOf(path, params).map(([, kind]) => kind), ...named].some((kind) => kind !== undefined && inside(kind));
  }

  /** Puts the world's project (made if need be) into `state` alone; "normal" undoes the others. */
  async setProjectState(state: ProjectStateName): Promise<void> {
    await setProjectState(this.pool, await this.need("project"), state);
    this.projectState = state;
  }

  /** The values the API gave with the world's resource of `kind` (made on first use), if any (`FixtureContext.note`). */
  async notes(kind: string): Promise<Record<string, string> | undefined> {
    await this.id(kind);
    return this.noted.get(kind);
  }

  /** The id of the world's resource of `kind`, made on first use (undefined when it could not be). */
  id(kind: string): Promise<number | undefined> {
    let made = this.made.get(kind);
    if (!made) {
      made = this.make(kind);
      this.made.set(kind, made);
    }
    return made;
  }

  private async need(kind: string): Promise<number> {
    const id = await this.id(kind);
    if (id === undefined) throw new Error(`the world has no ${kind}`);
    return id;
  }

  private async make(kind: string): Promise<number | undefined> {
    const pool = this.pool;
    const owner = this.owner.id;
    /** The resource of `parent` this one is made in, recorded so that `inProject` can tell what lives inside the project. */
    const need = (parent: string) => {
      this.parents.set(kind, [...(this.parents.get(kind) ?? []), parent]);
      return this.need(parent);
    };
    switch (kind) {
      case "owner":
        return owner;
      case "victim":
        return this.victimId;
      case "project":
        return buildProject(pool, owner);
      case "spareProject":
        // A second project of the owner's, in no team yet (the world's team holds the first).
        return buildProject(pool, owner);
      case "team":
        return buildTeam(pool, owner, { [this.victimId]: 3 }, [await need("project")]);
      case "schema":
        return buildSchema(pool, await need("project"), owner);
      case "template":
        return buildTemplate(pool, { projectId: await need("project") }, owner);
      case "topTemplate":
        return buildTemplate(pool, { ownerId: owner }, owner);
      case "variable":
        return pool.oneFirst(sql.type(idRow)`select id from template_variables where template_id = ${await need("template")} order by id limit 1`);
      case "file":
        return pool.oneFirst(sql.type(idRow)`select id from template_files where template_id = ${await need("template")} order by id limit 1`);
      case "generator":
        return buildGenerator(pool, { userId: owner, projectId: await need("project"), templateIds: [await need("template")], schemaId: await need("schema") });
      case "generation": {
        // Made by the world's template, as a run would: adjustments are keyed by their generation's template.
        const generation = await buildGeneration(pool, await need("project"), owner);
        await pool.query(sql.type(z.object({}))`update code_generations set template_id = ${await need("template")} where id = ${generation}`);
        return generation;
      }
      case "archive": {
        // `/archives/{id}` names the archive by its code generation's id.
        const generation = await need("generation");
        await pool.query(sql.type(z.object({}))`insert into project_archives (code_generation_id, status) values (${generation}, 'building')`);
        return generation;
      }
      case "adjustment":
        return pool.oneFirst(sql.type(idRow)`
          insert into code_adjustments (project_id, template_id, file_path, base_generation_id, base_content, adjusted_content, diff, additions, deletions, user_id)
          values (${await need("project")}, ${await need("template")}, 'index.php', ${await need("generation")}, 'a', 'b', '-a\n+b\n', 1, 1, ${owner}) returning id`);
      case "templateMedia":
        // An image, uploaded: GET /template-media/{id} serves stored images (a video is a link, not served).
        return this.viaApi(kind, `/api/projects/${await need("project")}/templates/${await need("template")}/media`, upload("file", png(), { media_type: "image" }), (b) => b.media.id);
      case "subscription":
        return pool.oneFirst(sql.type(idRow)`select id from subscriptions where project_id = ${await need("project")} order by started_at desc, id desc limit 1`);
      case "sqlParse": {
        // Parsed, as the parse job leaves it (GET …/schema reads parsed ones only).
        const text = "create table a (id int)";
        const { schema, warnings } = parseDdl(text, "PostgreSQL");
        return pool.oneFirst(sql.type(idRow)`
          insert into sql_parses (user_id, database_type, sql_text, parsed, warnings)
          values (${owner}, 'PostgreSQL', ${text}, ${sql.jsonb(schema as never)}, ${sql.jsonb(warnings as never)}) returning id`);
      }
      case "victimToken":
        return (await createPersonalToken(pool, owner, "victim")).token.id;
      // Through the API: what it returns is what a client would hold.
      case "environment":
        return this.viaApi(kind, `/api/projects/${await need("project")}/environments`, { name: "Live", type: "production", ftp_config: { host: "ftp.example.com", port: 21, username: "deployer", password: "pw-0123456789", remote_path: "/www" } }, (b) => b.environment.id);
      case "webhook":
        return this.viaApi(kind, `/api/projects/${await need("project")}/webhooks`, { event_type: "manual_trigger", target_url: "https://hooks.example.com/in", secret_key: "0123456789abcdef0123" }, (b) => b.webhook.id);
      case "translation":
        return this.viaApi(kind, `/api/projects/${await need("project")}/schemas/${await need("schema")}/translations`, { language: "de", table_name: "users", label: "Benutzer" }, (b) => b.translation.id);
      case "deployment":
        await need("environment");
        return this.viaApi(kind, "/api/deployments", { project_id: await need("project"), code_generation_id: await need("generation"), deployment_method: "ftp", target_environment: "production" }, (b) => b.deployment.id);
      case "formSet":
        return this.viaApi(kind, "/api/form-sets", { name: "Screens", project_id: await need("project"), schema_id: await need("schema") }, (b) => b.form_set.id);
      case "formWindow":
        return this.viaApi(kind, "/api/form-windows", { form_set_id: await need("formSet"), name: "Edit", window_type: "create_edit" }, (b) => b.form_window.id);
      case "formElement":
        return this.viaApi(kind, "/api/form-elements", { form_window_id: await need("formWindow"), element_type: "field_textinput", field_name: "users.email", control_type: "text" }, (b) => b.form_element.id);
      case "projectForm":
        return this.viaApi(kind, `/api/projects/${await need("project")}/forms`, { name: "Users", schema_id: await need("schema"), table_name: "users" }, (b) => b.form.id);
      case "projectFormField":
        return this.viaApi(kind, `/api/projects/${await need("project")}/forms/${await need("projectForm")}/fields`, { field_name: "email" }, (b) => b.field.id);
      case "projectReport":
        return this.viaApi(kind, `/api/projects/${await need("project")}/reports`, { name: "Posts", schema_id: await need("schema"), table_name: "posts" }, (b) => b.report.id);
      case "reportImage":
        // Uploaded, so that its file is in the storage the image route reads.
        return this.viaApi(kind, `/api/projects/${await need("project")}/reports/${await need("projectReport")}/images`, upload("image", png()), (b) => b.image.id);
      case "job":
        return this.viaApi(kind, `/api/deployments/${await need("deployment")}/execute`, {}, (b) => b.job.id);
      case "failedJob": {
        // The world's job as a worker leaves one that gave up (which the next operation's job must not be).
        const job = await need("job");
        this.spoiled = true;
        await pool.query(sql.type(z.object({}))`update jobs set status = 'failed', error = 'Connection refused', finished_at = now(), updated_at = now() where id = ${job}`);
        return job;
      }
      case "deploymentLog":
        return pool.oneFirst(sql.type(idRow)`insert into deployment_logs (deployment_id, type, message) values (${await need("deployment")}, 'info', 'Connected.') returning id`);
      case "stagingEnvironment":
        // The finished deployments' own environment: the world's job keeps the other one busy.
        return this.viaApi(kind, `/api/projects/${await need("project")}/environments`, { name: "Stage", type: "staging", ftp_config: { host: "ftp.example.com", port: 21, username: "deployer", password: "pw-0123456789", remote_path: "/stage" } }, (b) => b.environment.id);
      case "failedDeployment":
        return this.finishedDeployment(kind, need, "failed");
      case "deployedEarlier":
        return this.finishedDeployment(kind, need, "succeeded");
      case "deployedLatest":
        // After the earlier one, which a rollback of it restores (POST …/rollback names it, bodyHints.ts).
        await need("deployedEarlier");
        return this.finishedDeployment(kind, need, "succeeded");
      case "board":
        return this.viaApi(kind, `/api/projects/${await need("project")}/kanban`, { name: "Board", columns: ["To do", "Done"] }, (b) => b.board.id);
      case "column":
        return pool.oneFirst(sql.type(idRow)`select id from kanban_columns where board_id = ${await need("board")} order by position limit 1`);
      case "card":
        return this.viaApi(kind, "/api/kanban-cards", { column_id: await need("column"), title: "Card" }, (b) => b.card.id);
      case "label":
        return this.viaApi(kind, `/api/kanban-boards/${await need("board")}/labels`, { name: "bug", color: "#ff0000" }, (b) => b.label.id);
      case "comment":
        return this.viaApi(kind, `/api/kanban-cards/${await need("card")}/comments`, { body: "A comment" }, (b) => b.comment.id);
      case "assignee":
        return this.viaApi(kind, `/api/kanban-cards/${await need("card")}/assignees`, { user_id: owner }, (b) => b.assignee.assignment_id);
      case "thread":
        return this.viaApi(kind, "/api/messages/threads", { subject: "Hello", project_id: await need("project"), body: "First" }, (b) => b.thread.id);
      case "message":
        return pool.oneFirst(sql.type(idRow)`select id from messages where thread_id = ${await need("thread")} order by id limit 1`);
      case "attachment":
        // Uploaded, so that its file is in the storage the download reads.
        return this.viaApi(kind, `/api/messages/${await need("message")}/attachments`, upload("file", textFile()), (b) => {
          this.noted.set(kind, Object.fromEntries(new URL(b.attachment.download_url, this.baseUrl).searchParams));
          return b.attachment.id;
        });
      default:
        return this.store.make(kind) ?? makeAccountFixture(this.context, kind) ?? undefined;
    }
  }

  /** A deployment to the staging environment made through the API, then finished as a worker leaves it. */
  private async finishedDeployment(kind: string, need: (parent: string) => Promise<number>, status: "failed" | "succeeded"): Promise<number | undefined> {
    await need("stagingEnvironment");
    const body = { project_id: await need("project"), code_generation_id: await need("generation"), deployment_method: "ftp", target_environment: "staging" };
    const id = await this.viaApi(kind, "/api/deployments", body, (b) => b.deployment.id);
    if (id === undefined) return undefined;
    const error = status === "failed" ? "Connection refused" : null;
    await this.pool.query(sql.type(z.object({}))`update deployments set status = ${status}, error = ${error}, finished_at = now(), updated_at = now() where id = ${id}`);
    return id;
  }

  private viaApi(kind: string, path: string, body: unknown, pick: (b: any) => number): Promise<number | undefined> {
    return this.call(kind, "POST", path, body, pick);
  }

  private async call(kind: string, method: string, path: string, body: unknown, pick: (b: any) => number, options: { token?: string; expect?: number } = {}): Promise<number | undefined> {
    if (this.projectState !== "normal") await this.setProjectState("normal");
    const res = await request(this.baseUrl, method, path, { token: options.token ?? this.owner.token, body, raw: body instanceof FormData });
    if (options.expect ? res.status === options.expect : res.status < 300) return pick(res.body);
    this.missing.push(`${kind} (${res.status} ${res.text.slice(0, 120)})`);
    return undefined;
  }
}
