/**
 * The project-state mode of the fuzz: every operation whose path names the world's project or
 * a resource inside it runs with that project locked, its subscription expired or archived
 * (shared/projects/writable.ts), set after the operation's fixtures exist (they are made
 * through the API, which the state would refuse) and before the first write-log mark.
 *
 * Glossary: a *refusing state* is one of the three; a *writing* request is a POST, PUT, PATCH
 * or DELETE; an *exempt* operation is one whose guard lets it through a state by design (its
 * `StateExemptions`), or which changes no content of the project at all.
 */
import type { StateExemptions } from "../../../shared/projects/writable.ts";
import { projectStateRefusals } from "../factories.ts";
import type { Answer } from "./exchange.ts";
import type { FuzzRequest, Operation } from "./operations.ts";

/** A state a project refuses changes in. */
export type RefusingState = (typeof projectStateRefusals)[number]["state"];

export const REFUSING_STATES: readonly RefusingState[] = projectStateRefusals.map((r) => r.state);

/** The error code each state answers with (its status is in `projectStateResponses`). */
const CODES = Object.fromEntries(projectStateRefusals.map((r) => [r.state, r.code])) as Record<RefusingState, string>;

const ALLOWS: Record<RefusingState, keyof StateExemptions> = { locked: "allowLocked", expired: "allowExpired", archived: "allowArchived" };

const EVERY_STATE: StateExemptions = { allowLocked: true, allowExpired: true, allowArchived: true };

/**
 * Operations that may succeed in a refusing state, read from their routes: the
 * guard's options where they pass one, else why the route changes nothing of the project's
 * content. Each entry matches `METHOD /documented/path`.
 */
const EXEMPT: { route: RegExp; allows: StateExemptions; why: string }[] = [
  { route: /^POST \/api\/projects\/\{projectId\}\/(lock|unlock)$/, allows: EVERY_STATE, why: "lock and unlock are how a state is left (state.router.ts)" },
  { route: /^POST \/api\/projects\/\{projectId\}\/(archive|unarchive)$/, allows: { allowExpired: true, allowArchived: true }, why: "shelving changes no content; a locked project is unlocked first (state.router.ts)" },
  { route: /^DELETE \/api\/projects\/\{projectId\}$/, allows: { allowExpired: true, allowArchived: true }, why: "deleting a lapsed or shelved project needs no renewal (projects.router.ts)" },
  { route: /^POST \/api\/(subscriptions(\/\{id\}\/(cancel|renew))?|billing\/subscription)$/, allows: { allowExpired: true }, why: "renewing or subscribing anew (also as POST /billing/subscription) is how an expired project comes back (subscriptions.router.ts)" },
  { route: /^DELETE \/api\/archives\/\{id\}$/, allows: { allowExpired: true }, why: "a download archive is not content; freeing it needs no renewal (generations/load.ts)" },
  { route: /^POST \/api\/projects\/\{projectId\}\/(schemas\/compare|templates\/\{templateId\}\/(compile|preview))$/, allows: EVERY_STATE, why: "reads through POST: nothing is recorded (docs/decisions.md)" },
  { route: /^\w+ \/api\/(teams\/\{teamId\}(\/members.*)?)$/, allows: EVERY_STATE, why: "a team and its members are not content of the projects it shares (docs/decisions.md, sharing)" },
  { route: /^POST \/api\/teams\/\{teamId\}\/projects$/, allows: EVERY_STATE, why: "sharing another project with a team: the guard is the shared project's state (teams.router.ts), not that of the projects the team holds" },
  { route: /^(POST|PUT) \/api\/store\/templates(\/\{id\})?$/, allows: EVERY_STATE, why: "packaging a project's templates for the store reads them: the store template is the seller's, not the project's content (store/manage.router.ts)" },
  { route: /^\w+ \/api\/messages\//, allows: EVERY_STATE, why: "messages are talk, not content, also in a locked project (docs/decisions.md)" },
  { route: /^POST \/api\/(admin\/)?jobs\/\{id\}\/(cancel|retry)$/, allows: EVERY_STATE, why: "the job queue, not the project: no project guard; a job that writes content re-checks the project (writable.ts)" },
];

/** Whether a change by `op` may succeed while its project is in `state`. */
export function exemptIn(op: Operation, state: RefusingState): boolean {
  const name = `${op.method} ${op.path}`;
  return EXEMPT.some((e) => e.route.test(name) && e.allows[ALLOWS[state]] === true);
}

/** Whether `res` is the refusal of a project in `state`. */
export const refusedFor = (res: Answer, state: RefusingState): boolean => res.body?.code === CODES[state];

/**
 * What is wrong with the answer `res` to `req` of `op` while its project is in `state` (empty:
 * nothing): a refusal naming another state, a stranger told the state of a project they may
 * not see, or a change that succeeded and is not exempt.
 */
export function stateProblemsOf(op: Operation, req: FuzzRequest, res: Answer, state: RefusingState): string[] {
  const problems: string[] = [];
  const refusal = (Object.entries(CODES) as [RefusingState, string][]).find(([, code]) => res.body?.code === code)?.[0];
  if (refusal && refusal !== state) problems.push(`refused as ${refusal} (${res.status}) while the project is ${state}`);
  if (refusal && req.identity === "stranger") problems.push(`a stranger was told the project is ${refusal}`);
  const writing = ["POST", "PUT", "PATCH", "DELETE"].includes(op.method);
  // Any success counts, not only the valid requests': an invalid one that got through changed something too.
  if (writing && res.status < 300 && !exemptIn(op, state)) problems.push(`a change succeeded (${res.status}) while the project is ${state}`);
  return problems;
}
