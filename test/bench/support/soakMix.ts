/**
 * The soak benchmark's virtual users: each loops over what a person using the service does in
 * a session, through HTTP with their own bearer token, pausing between requests as people do.
 * One round: read the account; create a project; paste a short schema (parsed by a job);
 * create a template with files and run it (a generation job, then its zip); read lists with
 * pagination; create a kanban board and create and move cards while the user's pusher-js
 * client is subscribed to the board's channel; open a message thread and post in it; search
 * the store; delete the oldest projects again so that data does not only grow.
 *
 * Every request is tallied: latency, and whether it failed as a server error (5xx or no
 * answer) or with any other status the round did not expect (the mix sends only valid input).
 */
import type { Channel } from "pusher-js";
import { openPusher, type Pusher } from "../../support/pusher.ts";

export interface Tally {
  requests: number;
  /** Latency of every answered request, ms. */
  latencies: number[];
  /** 5xx answers and requests that got no answer (connection refused, reset). */
  serverErrors: number;
  /** Answers with a status the mix did not expect (4xx to valid input). */
  unexpected: number;
  /** The first few failures, for the report. */
  failures: string[];
  /** Realtime events the board subscriptions should have received, and did. */
  eventsExpected: number;
  eventsReceived: number;
  rounds: number;
  projectsDeleted: number;
  /** pusher-js clients opened (one per user, reconnected every few rounds). */
  socketsOpened: number;
}

export const newTally = (): Tally => ({
  requests: 0,
  latencies: [],
  serverErrors: 0,
  unexpected: 0,
  failures: [],
  eventsExpected: 0,
  eventsReceived: 0,
  rounds: 0,
  projectsDeleted: 0,
  socketsOpened: 0,
});

export interface VirtualUserOptions {
  url: string;
  realtimeKey: string;
  token: string;
  /** Index of the user, for names and the random sequence. */
  index: number;
  /** Loop until this time (ms since the epoch); a round under way finishes. */
  until: number;
  tally: Tally;
  /** Pause between requests, ms (a person's think time; varied ±50 %). */
  thinkMs: number;
  /** Projects a user keeps; older ones are deleted. */
  keepProjects: number;
  /** A fresh pusher-js connection every this many rounds (connects and disconnects churn too). */
  reconnectEvery: number;
}

const ddl = `
create table customers (id serial primary key, email varchar(190) not null unique, name text);
create table orders (id serial primary key, customer_id int not null references customers(id) on delete cascade,
  total numeric(10,2) not null, placed_at timestamptz default now());
`;

const template = (round: number) => ({
  name: `Models ${round}`,
  description: "One model per table",
  content: "Models for {:schema.name:}: {:for schema.tables:}{:table_name|pascal|singular:}{:if not loop.last:}, {:endif:}{:endfor:}",
  engine_type: "ultimate",
  variables: [
    { name: "schema", type: "schema", required: true },
    { name: "namespace", type: "string", default_value: "App" },
  ],
  files: [
    {
      file_name: "src/{:namespace|kebab:}/{:table.table_name|pascal|singular:}.ts",
      repeat: "schema.tables",
      content: "export interface {:table.table_name|pascal|singular:} {\n{:for field in table.fields:}  {:field.field_name|camel:}: unknown;\n{:endfor:}}\n",
    },
    { file_name: "README.md", content: "Tables: {:schema.tables.length:}\n{:code:}print(scope.schema.tables.map((t) => t.table_name).join(' + ')){:codeend:}" },
  ],
});

const searches = ["crm dashbord", "invoce generator", "kanbn tracker", "newsleter portal", "inventroy api"];

function subscribe(pusher: Pusher, name: string): Promise<Channel> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to the subscription of ${name} within 30 s`)), 30_000);
    const channel = pusher.subscribe(name);
    channel.bind("pusher:subscription_succeeded", () => {
      clearTimeout(timer);
      resolve(channel);
    });
    channel.bind("pusher:subscription_error", (error: { status?: number }) => {
      clearTimeout(timer);
      reject(new Error(`subscription to ${name} failed (${error.status})`));
    });
  });
}

/** An error's message, with its cause's (fetch wraps the socket's error as the cause). */
function errorText(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? `${(error as Error).message}: ${cause.message}` : (error as Error).message;
}

/** Thrown by a request of the round that failed; the round ends there and the next begins. */
class RoundFailed extends Error {}

/** A function making one request as a user; answers the body, or throws RoundFailed after tallying a failure. */
type Call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, expect?: number[]) => Promise<T>;

/** Requests to `url` with `token`, each tallied in `tally`, each after `before()` (a user's pause). */
function requester(url: string, token: string, tally: Tally, before: () => Promise<unknown>): { call: Call; fail: (what: string) => void } {
  const fail = (what: string) => {
    if (tally.failures.length < 12) tally.failures.push(what);
  };
  const call: Call = async <T>(method: string, path: string, body?: unknown, expect: number[] = [200, 201]): Promise<T> => {
    await before();
    tally.requests += 1;
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      tally.serverErrors += 1;
      fail(`${method} ${path}: no answer (${errorText(error)})`);
      throw new RoundFailed();
    }
    const text = await res.text();
    tally.latencies.push(performance.now() - started);
    if (expect.includes(res.status)) return (text ? JSON.parse(text) : {}) as T;
    if (res.status >= 500) tally.serverErrors += 1;
    else tally.unexpected += 1;
    fail(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    throw new RoundFailed();
  };
  return { call, fail };
}

/**
 * A burst at the start of the warm-up: every user runs `chains` schema parses and generations
 * at once, without pauses, so that the worker process's thread pools (SQL parse, template
 * sandbox, deflate), which grow only when all their threads are busy together, reach their
 * size before the memory baseline is taken instead of somewhere later in the run.
 */
export async function warmUpBurst(url: string, tokens: string[], tally: Tally, chains = 3): Promise<void> {
  await Promise.all(
    tokens.flatMap((token, user) =>
      Array.from({ length: chains }, async (_, chain) => {
        const { call } = requester(url, token, tally, async () => {});
        try {
          const project = (await call<{ project: { id: number } }>("POST", "/api/projects", { name: `Warm-up ${user}.${chain}` })).project.id;
          const schema = (await call<{ schema: { id: number } }>("POST", `/api/projects/${project}/schemas`, { name: "shop", database_type: "PostgreSQL", sql_text: ddl })).schema.id;
          const created = await call<{ template: { id: number } }>("POST", `/api/projects/${project}/templates`, template(chain));
          await call("POST", `/api/projects/${project}/templates/${created.template.id}/execute`, { schema, namespace: "Warm Up" });
          await call("DELETE", `/api/projects/${project}`);
          tally.projectsDeleted += 1;
        } catch (error) {
          if (!(error instanceof RoundFailed)) throw error;
        }
      }),
    ),
  );
}

/** One virtual user's loop; resolves when `until` has passed. */
export async function runVirtualUser(o: VirtualUserOptions): Promise<void> {
  const { tally } = o;
  let seed = 1 + o.index * 7919;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const think = () => new Promise((resolve) => setTimeout(resolve, o.thinkMs * (0.5 + random())));
  const { call, fail } = requester(o.url, o.token, tally, think);

  const projects: number[] = [];
  let pusher: Pusher | undefined;
  try {
    for (let round = 0; Date.now() < o.until; round += 1) {
      try {
        if (!pusher || round % o.reconnectEvery === 0) {
          pusher?.disconnect();
          pusher = undefined;
          pusher = await openPusher(o.url, o.realtimeKey, o.token).catch((error: unknown) => {
            tally.serverErrors += 1;
            fail(`pusher-js: ${(error as Error).message}`);
            throw new RoundFailed();
          });
          tally.socketsOpened += 1;
        }
        await runRound(round, pusher);
        tally.rounds += 1;
      } catch (error) {
        if (!(error instanceof RoundFailed)) throw error;
        await think();
      }
    }
  } finally {
    pusher?.disconnect();
  }

  async function runRound(round: number, pusher: Pusher): Promise<void> {
    await call("GET", "/api/user");
    const project = (await call<{ project: { id: number } }>("POST", "/api/projects", { name: `Soak ${o.index}.${round}`, description: "A soak project" })).project.id;
    projects.push(project);
    const schema = (await call<{ schema: { id: number } }>("POST", `/api/projects/${project}/schemas`, { name: "shop", database_type: "PostgreSQL", sql_text: ddl })).schema.id;
    const created = await call<{ template: { id: number } }>("POST", `/api/projects/${project}/templates`, template(round));
    const run = await call<{ code_generation_id: number }>("POST", `/api/projects/${project}/templates/${created.template.id}/execute`, { schema, namespace: "Shop Api" });
    await call("GET", `/api/code-generations/${run.code_generation_id}`);
    await call("GET", `/api/projects?page=${1 + (round % 3)}&per_page=5`);
    await call("GET", `/api/projects/${project}/code-generations?page=1&per_page=10`);
    await call("GET", "/api/jobs?per_page=10");

    await kanban(project, pusher);

    const thread = (await call<{ thread: { id: number } }>("POST", "/api/messages/threads", { subject: `Round ${round}`, project_id: project, body: "Kick-off" })).thread.id;
    await call("POST", `/api/messages/threads/${thread}`, { body: "Schema pasted, generation ran." });
    await call("POST", `/api/messages/threads/${thread}`, { body: "Board is up." });
    await call("GET", "/api/messages/threads?page=1&per_page=10");
    await call("GET", `/api/messages/threads/${thread}`);
    await call("GET", `/api/store/templates?q=${encodeURIComponent(searches[round % searches.length]!)}&page=1&rows=12`);

    while (projects.length > o.keepProjects) {
      await call("DELETE", `/api/projects/${projects.shift()!}`);
      tally.projectsDeleted += 1;
    }
  }

  /** A board of three columns: four cards created, four moved, each event counted on the board's channel. */
  async function kanban(project: number, pusher: Pusher): Promise<void> {
    const board = (await call<{ board: { id: number; columns: { id: number }[] } }>("POST", `/api/projects/${project}/kanban`, { name: "Sprint", columns: ["To do", "Doing", "Done"] })).board;
    const name = `private-kanban-board.${board.id}`;
    let received = 0;
    let expected = 0;
    const channel = await subscribe(pusher, name).catch((error: unknown) => {
      tally.unexpected += 1;
      fail((error as Error).message);
      throw new RoundFailed();
    });
    const count = () => (received += 1);
    channel.bind("CardCreated", count);
    channel.bind("CardMoved", count);
    try {
      const cards: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        cards.push((await call<{ card: { id: number } }>("POST", "/api/kanban-cards", { column_id: board.columns[0]!.id, title: `Card ${i}`, description: "Some **markdown** text" })).card.id);
        expected += 1;
      }
      await call("GET", `/api/projects/${project}/kanban`);
      for (const [i, card] of cards.entries()) {
        await call("POST", `/api/kanban-cards/${card}/move`, { column_id: board.columns[1 + (i % 2)]!.id, order: 0 });
        expected += 1;
      }
    } finally {
      // Events travel through NOTIFY and the web process's LISTEN connection: give them a moment.
      const deadline = Date.now() + 5000;
      while (received < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      tally.eventsExpected += expected;
      tally.eventsReceived += received;
      if (received < expected) fail(`${name}: ${received} of ${expected} events within 5 s`);
      channel.unbind_all();
      pusher.unsubscribe(name);
    }
  }
}
