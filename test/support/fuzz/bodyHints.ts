/**
 * What a valid request of the owner's needs in its body and query to get past the route's
 * lookups into its work: body and query fields that name a resource are filled with the
 * fixture world's id of that kind (`BY_FIELD`, by field name, as `world.ts` fills path
 * parameters), and a few operations whose strings must mean something (SQL text, a file)
 * get a known-good fragment (`FRAGMENTS`), or values the world holds (`FROM_WORLD`: its owner's
 * password, a signed link, a TOTP code). Only some valid requests carry these
 * (`operations.ts`); the others stay fully random, so that a wrong id's refusal stays covered.
 */
import { buffer } from "node:stream/consumers";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { OWNER_PASSWORD } from "./accountFixtures.ts";
import { PUSH_SUBSCRIPTION, png, textFile } from "./sampleFiles.ts";
import type { FuzzRequest, Operation } from "./operations.ts";
import type { JsonSchema, ResolveRef } from "./schemaArbitrary.ts";
import type { World } from "./world.ts";

/**
 * World kinds by body or query field name, where the field's schema is an integer (or a list
 * of them). A field the world's kind does not fit (a store template's `template_id`) is
 * refused as a missing resource, as a random id would be.
 */
const BY_FIELD: Record<string, string> = {
  project_id: "project",
  schema_id: "schema",
  schema_id_1: "schema",
  schema_id_2: "schema",
  template_id: "template",
  template_ids: "template",
  generator_id: "generator",
  code_generation_id: "generation",
  board_id: "board",
  column_id: "column",
  card_id: "card",
  labels: "label",
  assignees: "owner",
  user_id: "owner",
  team_id: "team",
  form_set_id: "formSet",
  form_window_id: "formWindow",
  environment_id: "environment",
  deployment_id: "deployment",
  thread_id: "thread",
  job_id: "job",
  adjustment_id: "adjustment",
  parse_id: "sqlParse",
};

/**
 * Where one operation's field names another kind than `BY_FIELD` says, by operation id, with
 * why: a store route's `template_id` is a store template, and a team gains a project it does
 * not hold yet.
 */
const BY_OPERATION_FIELD: Record<string, { why: string; fields: Record<string, string> }> = {
  postApiStorePurchase: { why: "another seller's published template the owner has not bought and can afford", fields: { template_id: "storeForSale" } },
  postApiStorePlagiarismCheck: { why: "a store template with a published version", fields: { template_id: "storeTemplate" } },
  postApiSubscriptions: { why: "a plan sold for credits", fields: { plan_id: "proPlan" } },
  postApiBillingSubscription: { why: "a plan sold for credits", fields: { plan_id: "proPlan" } },
  postApiDeploymentsIdRollback: { why: "the earlier succeeded deployment to the same environment", fields: { rollback_to: "deployedEarlier" } },
  postApiTeamsTeamIdProjects: { why: "a project of the owner's outside the world's team (which holds the world's project)", fields: { project_id: "spareProject" } },
};

/**
 * Kinds an operation's work needs that neither its path nor its body names, by operation id,
 * with why; made before its first write mark.
 */
const NEEDS: Record<string, { why: string; kinds: string[] }> = {
  postApiStoreTemplates: { why: "only a seller with a complete profile lists templates", kinds: ["seller"] },
  postApiPushUnsubscribe: { why: "a subscription of the owner's to remove", kinds: ["pushSubscription"] },
  postApiSellerPayouts: { why: "a seller's pending earnings, from another user's purchase of the owner's template", kinds: ["seller", "storeSale"] },
  postApiAuth2faRecoveryCodes: { why: "recovery codes exist only with two-factor authentication on", kinds: ["twoFactorOn"] },
  postApiFormDesignerUnlock: { why: "the credits the unlock costs (the owner, a patron, has access, so a trial is refused)", kinds: ["credits"] },
  postApiSubscriptions: { why: "the credits a period of the plan costs", kinds: ["credits"] },
  postApiBillingSubscription: { why: "the credits a period of the plan costs", kinds: ["credits"] },
  postApiPatronSubscribe: { why: "the credits a patron month costs", kinds: ["credits"] },
};

/**
 * Operations whose query or body carries values the API gave with a world's resource
 * (`World.notes`), by operation id, with why: generated ones never match. Into `signed`: the
 * noted `body` is sent as it is, the other notes as headers (a webhook and its signature,
 * which a mutation of the body breaks, as it should). Those `secret` are
 * the owner's own (a password, a code, an e-mailed token or link): a stranger's requests do
 * not carry them (`forStranger`), nor spend a single-use one before the owner's.
 */
const FROM_WORLD: Record<string, { why: string; kind: string; into: "query" | "body" | "signed"; secret?: true }> = {
  getApiAttachmentsIdDownload: { why: "the attachment's signed link (`expires`, `signature`) is the credential", kind: "attachment", into: "query" },
  postApiProjectsJoin: { why: "the join code of another user's project open to join requests", kind: "joinableProject", into: "body" },
  postApiCardprocessorWebhook: { why: "an event signed with the card processor's webhook secret (Stripe-Signature)", kind: "cardEvent", into: "signed", secret: true },
  postApiWalletproviderWebhook: { why: "an event with the wallet provider's transmission headers, which its stand-in verifies", kind: "walletEvent", into: "signed", secret: true },
  postApiAuthLogin: { why: "the owner's e-mail and password", kind: "signIn", into: "body", secret: true },
  postApiOauthToken: { why: "the password grant of the first-party client, with the owner's e-mail and password", kind: "oauthSignIn", into: "body", secret: true },
  postApiAuthLogin2fa: { why: "a login challenge of the owner's (2FA on) and a current TOTP code", kind: "twoFactorChallenge", into: "body", secret: true },
  postApiAuth2faConfirm: { why: "a current TOTP code of the pending secret, and the password", kind: "twoFactorPending", into: "body", secret: true },
  postApiAuthResetPassword: { why: "the e-mailed reset token and its address", kind: "passwordReset", into: "body", secret: true },
  postApiAuth2faRestore: { why: "the restore token e-mailed when two-factor was turned off or its recovery codes replaced", kind: "twoFactorRestore", into: "body", secret: true },
  postApiAuthEmailCancelChange: { why: "the cancel token e-mailed to the old address of a pending change", kind: "emailChange", into: "body", secret: true },
  postApiAuthEmailVerifyIdHash: { why: "the link's signature and expiry (`{hash}` is the owner's, `world.ts`)", kind: "verificationLink", into: "query", secret: true },
};

/** Kinds that are people or public, not resources: naming one is no claim on the owner's things. */
const PEOPLE = new Set(["owner", "victim", "proPlan"]);

/** Sizes a create/edit window accepts (shared/forms/windowSizes.ts). */
const WINDOW = { window_type: "create_edit", min_width: 300, min_height: 250, default_width: 600, default_height: 500 };
const SQL = { database_type: "PostgreSQL", sql_text: "create table users (id serial primary key, email varchar(255) not null);" };

/** A template zip (`template.json` and one file) as GET …/templates/{templateId}/export writes one. */
async function templateZip(): Promise<File> {
  const manifest = { name: "Fuzz", engine_type: "ultimate", content: "", variables: [{ name: "entity", type: "string" }], files: [{ file_name: "README.md", order: 0 }] };
  const entries = [
    { path: "template.json", content: JSON.stringify(manifest) },
    { path: "files/README.md", content: "# {:entity:}\n" },
  ];
  return new File([new Uint8Array(await buffer(createZipStream(entries)))], "template.zip", { type: "application/zip" });
}

/**
 * Known-good body fragments by operation id, where a field must mean something that a value
 * generated from its schema almost never does; each with why. Left blind by design: the git
 * providers' OAuth callback, payment webhooks (a signature), and what needs a live peer
 * (deploying, testing a connection, git).
 */
const FRAGMENTS: Record<string, { why: string; body: () => Record<string, unknown> | Promise<Record<string, unknown>> }> = {
  postApiSqlParse: { why: "a dialect the parser knows, and DDL", body: () => SQL },
  postApiProjectsProjectIdSchemas: { why: "a dialect the parser knows, and DDL", body: () => SQL },
  putApiProjectsProjectIdSchemasSchemaId: { why: "a dialect the parser knows, and DDL", body: () => SQL },
  postApiProjectsProjectIdReportsReportIdImages: { why: "an image file", body: () => ({ image: png() }) },
  postApiProjectsProjectIdTemplatesTemplateIdMedia: { why: "an image file", body: () => ({ media_type: "image", file: png() }) },
  postApiMessagesMessageIdAttachments: { why: "a file", body: () => ({ file: textFile() }) },
  postApiProjectsProjectIdTemplatesImport: { why: "a template zip", body: async () => ({ file: await templateZip() }) },
  postApiProjectsProjectIdForms: { why: "a table of the world's schema", body: () => ({ table_name: "users" }) },
  putApiProjectsProjectIdFormsFormId: { why: "a table of the world's schema", body: () => ({ table_name: "users" }) },
  postApiProjectsProjectIdFormsFormIdFields: { why: "a column of the form's table", body: () => ({ field_name: "email" }) },
  postApiProjectsProjectIdReports: { why: "a table of the world's schema", body: () => ({ table_name: "posts" }) },
  postApiProjectsProjectIdSchemasSchemaIdTranslations: { why: "a table of the world's schema", body: () => ({ table_name: "users" }) },
  postApiFormWindows: { why: "sizes within the window type's bounds", body: () => WINDOW },
  putApiFormWindowsId: { why: "sizes within the window type's bounds", body: () => WINDOW },
  postApiFormElements: { why: "a place inside the world's 600-wide window", body: () => ({ x_position: 10, y_position: 10, width: 100, height: 20, anchor_right: undefined, anchor_bottom: undefined, anchor_width: undefined, anchor_height: undefined }) },
  putApiFormElementsId: { why: "a text field of the world's schema, placed inside the world's 600-wide window", body: () => ({ element_type: "field_textinput", field_name: "users.email", control_type: "text", link_table: undefined, link_field: undefined, link_display_field: undefined, x_position: 10, y_position: 10, width: 100, height: 20, anchor_right: undefined, anchor_bottom: undefined, anchor_width: undefined, anchor_height: undefined }) },
  postApiProjectsImport: { why: "the bundle's format and version (GET …/export writes them), and a project", body: () => ({ format: "schemaforge-project", version: 1, project: { name: "Imported" } }) },
  putApiFormWindowsIdLayout: { why: "the window's current version (a new window is at 1), and no elements", body: () => ({ version: 1, elements: [] }) },
  putApiProjectsProjectIdFormsFormIdLayout: { why: "a layout of no items (its items must be fields on the form)", body: () => ({ width: 600, height: 400, items: [] }) },
  postApiDeployments: { why: "the method and target the world's environment is configured for", body: () => ({ deployment_method: "ftp", target_environment: "production" }) },
  postApiCodeGenerationsIdAdjustments: { why: "content or a diff, not both", body: () => ({ file_path: "index.php", content: "<?php\n", diff: undefined }) },
  putApiCodeAdjustmentsId: { why: "content or a diff, not both", body: () => ({ content: "b\n", diff: undefined }) },
  postApiApiTokens: { why: "no expiry and every ability (a generated date is rarely within the coming year)", body: () => ({ abilities: undefined, expires_at: undefined }) },
  postApiStorePurchase: { why: "the world's store prices are in credits: a payment method starts a euro payment, whose providers are not configured under tests", body: () => ({ payment_method: undefined }) },
  postApiStoreTemplates: { why: "a price that fits its type (a generated credits or euros price is often 0)", body: () => ({ price_type: "free" }) },
  postApiStoreTemplatesIdMedia: { why: "an image file", body: () => ({ media_type: "image", file: png() }) },
  postApiSellerPayouts: { why: "the payout minimum (PAYOUT_MINIMUM_EUR), within the world's earnings", body: () => ({ amount: 20 }) },
  postApiPushSubscribe: { why: "a browser's subscription: valid P-256 and auth keys", body: () => PUSH_SUBSCRIPTION },
  postApiPushUnsubscribe: { why: "the endpoint of the world's subscription", body: () => ({ endpoint: PUSH_SUBSCRIPTION.endpoint }) },
  postApiBroadcastingAuth: { why: "a socket id and a private channel the owner (a site administrator) may join", body: () => ({ socket_id: "1234.5678", channel_name: "private-admin.jobs" }) },
  postApiDeploymentsUpload: { why: "an FTP target and a file (the job that would connect does not run here)", body: () => ({ deployment_method: "ftp", ftp_host: "ftp.example.com", ftp_port: "21", ftp_username: "deployer", ftp_password: "pw-0123456789", ftp_path: "/www", "files[0]": textFile() }) },
  postApiSubscriptions: { why: "payment in credits: card and wallet payments are not configured under tests", body: () => ({ payment_method: "credits" }) },
  postApiBillingSubscription: { why: "payment in credits: card and wallet payments are not configured under tests", body: () => ({ payment_method: "credits" }) },
  postApiPatronSubscribe: { why: "a level that exists, paid in credits (card and wallet payments are not configured under tests)", body: () => ({ level: 1, payment_method: "credits" }) },
  postApiAuthRegister: { why: "a password and its matching confirmation", body: () => ({ password: "Fuzz-password-8h3k", password_confirmation: "Fuzz-password-8h3k", invitation_token: undefined }) },
  postApiAuthResetPassword: { why: "a new password and its matching confirmation", body: () => ({ password: "Fuzz-password-8h3k", password_confirmation: "Fuzz-password-8h3k" }) },
  postApiAuth2faEnable: { why: "the owner's password", body: () => ({ current_password: OWNER_PASSWORD }) },
  postApiAuth2faDisable: { why: "the owner's password", body: () => ({ password: OWNER_PASSWORD }) },
  postApiAuth2faRecoveryCodes: { why: "the owner's password", body: () => ({ password: OWNER_PASSWORD }) },
  putApiProfilePassword: { why: "the owner's password, and a new one with its confirmation (no 2FA code: 2FA is off)", body: () => ({ current_password: OWNER_PASSWORD, password: "Fuzz-password-8h3k", password_confirmation: "Fuzz-password-8h3k", two_factor_code: undefined }) },
  putApiUser: { why: "the owner's password, which a new e-mail address needs (no 2FA code: 2FA is off)", body: () => ({ current_password: OWNER_PASSWORD, two_factor_code: undefined }) },
  deleteApiUser: { why: "the owner's password", body: () => ({ password: OWNER_PASSWORD }) },
  deleteApiProfile: { why: "the owner's password", body: () => ({ password: OWNER_PASSWORD }) },
};

/** Known-good query values by operation id, where a generated one is almost never valid; each with why. */
const QUERY_FRAGMENTS: Record<string, { why: string; query: Record<string, string> }> = {
  getApiAdminBillingReport: { why: "calendar dates in order (the pattern YYYY-MM-DD allows month 75)", query: { from: "2026-01-01", to: "2026-12-31" } },
};

/** The fragments made so far (a zip is made once). */
const made = new Map<string, Promise<Record<string, unknown>>>();
const fragmentOf = (operationId: string): Promise<Record<string, unknown>> | undefined => {
  const fragment = FRAGMENTS[operationId];
  if (!fragment) return undefined;
  if (!made.has(operationId)) made.set(operationId, Promise.resolve(fragment.body()));
  return made.get(operationId);
};

/** What the named requests of one operation carry. */
export interface Naming {
  body: Record<string, unknown>;
  query: Record<string, string>;
  /** The resource kinds (not people) the body or query names. */
  resources: string[];
  /** The body fields that hold the world's ids. */
  idFields: string[];
  /** The body and query fields that hold the owner's secrets (`FROM_WORLD`). */
  secrets: string[];
  /** A body to send as it is, with its headers (`FROM_WORLD` into `signed`). */
  signed?: { body: string; headers: Record<string, string>; secret: boolean };
}

/** `naming` as a stranger has it: without the owner's secrets. */
export function forStranger(naming: Naming | undefined): Naming | undefined {
  if (!naming?.secrets.length && !naming?.signed?.secret) return naming;
  const without = (values: Record<string, any>) => Object.fromEntries(Object.entries(values).filter(([name]) => !naming.secrets.includes(name)));
  const rest = { ...naming, body: without(naming.body), query: without(naming.query), signed: naming.signed?.secret ? undefined : naming.signed };
  return Object.keys(rest.body).length || Object.keys(rest.query).length || rest.signed ? rest : undefined;
}

/**
 * Whether `req` still carries every id `naming` put into its body (a mutation may have
 * replaced one): whether what it does happens among the world's resources.
 */
export function carriesIds(req: FuzzRequest, naming: Naming): boolean {
  let body: unknown = req.body;
  if (req.raw !== undefined) {
    try {
      body = JSON.parse(req.raw);
    } catch {
      return false;
    }
  }
  if (body === null || typeof body !== "object") return false;
  const fields = body as Record<string, unknown>;
  // Compared by hand: a mutated field may be nested too deep for JSON.stringify.
  const same = (got: unknown, want: unknown) => (Array.isArray(want) ? Array.isArray(got) && got.length === want.length && got.every((v, i) => v === want[i]) : got === want);
  return naming.idFields.every((name) => same(fields[name], naming.body[name]));
}

/** `schema` with its reference followed. */
const deref = (schema: JsonSchema | undefined, resolve: ResolveRef): JsonSchema => (typeof schema?.$ref === "string" ? (resolve(schema.$ref) ?? {}) : (schema ?? {}));

/** Whether `schema` accepts an integer (directly, or as one branch of a union). */
function takesInteger(schema: JsonSchema | undefined, resolve: ResolveRef): boolean {
  const s = deref(schema, resolve);
  if (s.type === "integer" || (Array.isArray(s.type) && s.type.includes("integer"))) return true;
  return [...((s.anyOf as JsonSchema[] | undefined) ?? []), ...((s.oneOf as JsonSchema[] | undefined) ?? [])].some((b) => takesInteger(b, resolve));
}

/** Whether `schema` is a list of integers (directly, or as one branch of a union). */
function takesIntegers(schema: JsonSchema | undefined, resolve: ResolveRef): boolean {
  const s = deref(schema, resolve);
  if (s.type === "array") return takesInteger(s.items as JsonSchema | undefined, resolve);
  return [...((s.anyOf as JsonSchema[] | undefined) ?? []), ...((s.oneOf as JsonSchema[] | undefined) ?? [])].some((b) => takesIntegers(b, resolve));
}

/** The top-level properties of an object body (through references, `allOf` and union branches). */
function propertiesOf(schema: JsonSchema | undefined, resolve: ResolveRef): Record<string, JsonSchema> {
  const s = deref(schema, resolve);
  const branches = [...((s.allOf as JsonSchema[] | undefined) ?? []), ...((s.anyOf as JsonSchema[] | undefined) ?? []), ...((s.oneOf as JsonSchema[] | undefined) ?? [])];
  return Object.assign({}, ...branches.map((b) => propertiesOf(b, resolve)), (s.properties ?? {}) as Record<string, JsonSchema>);
}

/**
 * The world's ids for the fields of `op` that name a resource, and its fragment (the kinds
 * are made now, before the operation's first write mark); undefined when it names none.
 * `idsOnly`: without what `NEEDS` and `FROM_WORLD` make, for a first look at what the body names.
 */
export async function namingOf(op: Operation, resolve: ResolveRef, world: World, idsOnly = false): Promise<Naming | undefined> {
  const naming: Naming = { body: {}, query: {}, resources: [], idFields: [], secrets: [] };
  for (const kind of idsOnly ? [] : (NEEDS[op.id]?.kinds ?? [])) await world.id(kind);
  const idOf = async (name: string) => {
    const kind = BY_OPERATION_FIELD[op.id]?.fields[name] ?? BY_FIELD[name];
    const id = kind ? await world.id(kind) : undefined;
    if (id !== undefined && !PEOPLE.has(kind!) && !naming.resources.includes(kind!)) naming.resources.push(kind!);
    return id;
  };
  for (const [name, schema] of Object.entries(propertiesOf(op.body, resolve))) {
    const one = takesInteger(schema, resolve);
    if (!one && !takesIntegers(schema, resolve)) continue;
    const id = await idOf(name);
    if (id === undefined) continue;
    naming.body[name] = one ? id : [id];
    naming.idFields.push(name);
  }
  for (const q of op.query) {
    const id = takesInteger(q.schema, resolve) || deref(q.schema, resolve).type === "number" ? await idOf(q.name) : undefined;
    if (id !== undefined) naming.query[q.name] = String(id);
  }
  const given = idsOnly ? undefined : FROM_WORLD[op.id];
  if (given) {
    const values = (await world.notes(given.kind)) ?? {};
    if (given.into === "signed") {
      const { body, ...headers } = values;
      if (body !== undefined) naming.signed = { body, headers, secret: given.secret === true };
    } else {
      Object.assign(naming[given.into], values);
      if (given.secret) naming.secrets.push(...Object.keys(values));
    }
  }
  Object.assign(naming.query, QUERY_FRAGMENTS[op.id]?.query);
  Object.assign(naming.body, await fragmentOf(op.id));
  return Object.keys(naming.body).length || Object.keys(naming.query).length || naming.signed ? naming : undefined;
}
