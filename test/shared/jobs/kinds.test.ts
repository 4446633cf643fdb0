/**
 * The service's job kinds (shared/jobs/kinds.ts): each kind's name and attempts, a payload it
 * takes (with the defaults it fills in), and the payloads it refuses, which enqueue would
 * throw on and a task would fail as malformed.
 */
import t from "tap";
import * as kinds from "../../../shared/jobs/kinds.ts";
import type { JobKind } from "../../../shared/jobs/kind.ts";

interface Case {
  kind: JobKind;
  name: string;
  maxAttempts: number;
  /** A payload and what the schema makes of it. */
  ok: [unknown, unknown][];
  refused: unknown[];
}

const id = (field: string, extra: Record<string, unknown> = {}) => [{ ...extra, [field]: 0 }, { ...extra, [field]: 1.5 }, { ...extra, [field]: "1" }, extra];
const cron = { _cron: { ts: "2026-11-25T10:00:00Z", extra: 1 }, other: true };
const loose = (kind: JobKind, name: string, maxAttempts: number): Case => ({ kind, name, maxAttempts, ok: [[{}, {}], [{ any: 1 }, { any: 1 }]], refused: [null, "x"] });

const push = { user_id: 1, kind: "message_posted", title: "T", body: "B" };
const execute = { mode: "execute", project_id: 1, user_id: 2, template_ids: [3], values: {} };

const cases: Case[] = [
  loose(kinds.maintenanceCleanup, "maintenance__cleanup", 3),
  loose(kinds.archivesCleanup, "archives__cleanup", 3),
  loose(kinds.storageSweep, "storage__sweep", 3),
  loose(kinds.mediaSweep, "media__sweep", 3),
  loose(kinds.visitsRollup, "visits__rollup", 3),
  loose(kinds.webhooksDispatch, "webhooks__dispatch", 5),
  {
    kind: kinds.emailsSend,
    name: "emails__send",
    maxAttempts: 8,
    ok: [
      [{ to: "a@example.test", kind: "verify_email", locale: "de", params: { a: "b" } }, { to: "a@example.test", kind: "verify_email", locale: "de", params: { a: "b" } }],
      [{ to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "https://x.test/a" }, { to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "https://x.test/a" }],
      // A path in the web client, resolved against FRONTEND_URL when sent.
      [{ to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "/support/7?tab=replies" }, { to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "/support/7?tab=replies" }],
      [{ to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "/" }, { to: "a@example.test", kind: "support_ticket_reply", locale: "en", params: {}, link: "/" }],
    ],
    refused: [
      { to: "not-mail", kind: "verify_email", locale: "en", params: {} },
      { to: "a@example.test", kind: "spam", locale: "en", params: {} },
      { to: "a@example.test", kind: "verify_email", locale: "fr", params: {} },
      { to: "a@example.test", kind: "verify_email", locale: "en", params: { a: 1 } },
      { to: "a@example.test", kind: "verify_email", locale: "en", params: {}, link: "not a url" },
      // Paths only: not protocol-relative (another host), no backslash form of it, no spaces, nothing before the slash.
      ...["//evil.test/x", "/\\evil.test", "/a b", "/a\n", "x/a", " /a", "/a/ "].map((link) => ({ to: "a@example.test", kind: "verify_email", locale: "en", params: {}, link })),
    ],
  },
  {
    kind: kinds.schemasParse,
    name: "schemas__parse",
    maxAttempts: 3,
    ok: [
      [{ target: "schema", schema_id: 1, revision_id: 2 }, { target: "schema", schema_id: 1, revision_id: 2 }],
      [{ target: "sql_parse", parse_id: 3 }, { target: "sql_parse", parse_id: 3 }],
    ],
    refused: [{ target: "schema", schema_id: 1 }, { target: "schema", schema_id: 0, revision_id: 2 }, { target: "schema", schema_id: 1, revision_id: 2.5 }, { target: "sql_parse", parse_id: -1 }, { target: "other", parse_id: 1 }],
  },
  {
    kind: kinds.templatesExecute,
    name: "templates__execute",
    maxAttempts: 3,
    ok: [
      [execute, { ...execute, generator_id: null, schema_id: null, base_values: {}, apply_adjustments: false }],
      [
        { ...execute, mode: "preview", template_ids: Array.from({ length: 100 }, (_, i) => i + 1), generator_id: 4, schema_id: 5, base_values: { a: 1 }, apply_adjustments: true },
        { ...execute, mode: "preview", template_ids: Array.from({ length: 100 }, (_, i) => i + 1), generator_id: 4, schema_id: 5, base_values: { a: 1 }, apply_adjustments: true },
      ],
    ],
    refused: [
      { ...execute, mode: "run" },
      { ...execute, template_ids: [] },
      { ...execute, template_ids: Array.from({ length: 101 }, (_, i) => i + 1) },
      { ...execute, template_ids: [0] },
      { ...execute, project_id: 0 },
      { ...execute, user_id: 1.5 },
      { ...execute, generator_id: 0 },
      { ...execute, schema_id: -2 },
      { ...execute, values: undefined },
      { ...execute, apply_adjustments: "yes" },
    ],
  },
  { kind: kinds.archivesBuild, name: "archives__build", maxAttempts: 5, ok: [[{ code_generation_id: 1 }, { code_generation_id: 1 }]], refused: id("code_generation_id") },
  { kind: kinds.deploymentsRun, name: "deployments__run", maxAttempts: 5, ok: [[{ deployment_id: 9 }, { deployment_id: 9 }]], refused: id("deployment_id") },
  {
    kind: kinds.deploymentsUpload,
    name: "deployments__upload",
    maxAttempts: 2,
    ok: [[{ upload_key: "deployment-uploads/abcdefghij_-KLMNO" }, { upload_key: "deployment-uploads/abcdefghij_-KLMNO" }], [{ upload_key: `deployment-uploads/${"a".repeat(64)}` }, { upload_key: `deployment-uploads/${"a".repeat(64)}` }]],
    refused: [
      { upload_key: "deployment-uploads/short" },
      { upload_key: `deployment-uploads/${"a".repeat(65)}` },
      { upload_key: "deployment-uploads/abcdefghij.KLMNOP" },
      { upload_key: "other/abcdefghijKLMNOPQR" },
      { upload_key: "x/deployment-uploads/abcdefghijKLMNOPQR" },
      { upload_key: "deployment-uploads/abcdefghijKLMNOPQR/../x" },
      {},
    ],
  },
  {
    kind: kinds.webhooksSchedule,
    name: "webhooks__schedule",
    maxAttempts: 3,
    ok: [[{}, {}], [cron, cron]],
    refused: [{ _cron: { ts: 1 } }, { _cron: "now" }],
  },
  { kind: kinds.webhooksDeliver, name: "webhooks__deliver", maxAttempts: 8, ok: [[{ delivery_id: 4 }, { delivery_id: 4 }]], refused: id("delivery_id") },
  {
    kind: kinds.adjustmentsApply,
    name: "adjustments__apply",
    maxAttempts: 3,
    ok: [[{ code_generation_id: 1, user_id: 2 }, { code_generation_id: 1, user_id: 2 }]],
    refused: [...id("code_generation_id", { user_id: 2 }), ...id("user_id", { code_generation_id: 1 })],
  },
  { kind: kinds.payoutsProcess, name: "payouts__process", maxAttempts: 5, ok: [[{ payout_id: 2 }, { payout_id: 2 }]], refused: id("payout_id") },
  { kind: kinds.paymentsProcess, name: "payments__process", maxAttempts: 8, ok: [[{ payment_event_id: 2 }, { payment_event_id: 2 }]], refused: id("payment_event_id") },
  { kind: kinds.paymentsRefund, name: "payments__refund", maxAttempts: 8, ok: [[{ transaction_id: 2 }, { transaction_id: 2 }]], refused: id("transaction_id") },
  {
    kind: kinds.subscriptionsRenew,
    name: "subscriptions__renew",
    maxAttempts: 3,
    ok: [[{}, {}], [cron, cron]],
    refused: [{ _cron: { ts: 1 } }, { _cron: "now" }],
  },
  {
    kind: kinds.pushSend,
    name: "push__send",
    maxAttempts: 3,
    ok: [
      [push, { ...push, url: null, round: 0 }],
      [
        { ...push, title: "t".repeat(200), body: "b".repeat(1000), url: "u".repeat(2048), subscription_ids: Array.from({ length: 1000 }, (_, i) => i + 1), round: 10 },
        { ...push, title: "t".repeat(200), body: "b".repeat(1000), url: "u".repeat(2048), subscription_ids: Array.from({ length: 1000 }, (_, i) => i + 1), round: 10 },
      ],
    ],
    refused: [
      { ...push, user_id: 0 },
      { ...push, kind: "spam" },
      { ...push, title: "t".repeat(201) },
      { ...push, body: "b".repeat(1001) },
      { ...push, url: "u".repeat(2049) },
      { ...push, subscription_ids: [0] },
      { ...push, subscription_ids: Array.from({ length: 1001 }, (_, i) => i + 1) },
      { ...push, round: 11 },
      { ...push, round: -1 },
      { ...push, round: 1.5 },
    ],
  },
  {
    kind: kinds.translationsAuto,
    name: "translations__auto",
    maxAttempts: 5,
    ok: [
      [{ schema_id: 1, target_language: "de" }, { schema_id: 1, target_language: "de", source_language: null }],
      [{ schema_id: 1, target_language: "pt-BR", source_language: "gsw-Latn1234" }, { schema_id: 1, target_language: "pt-BR", source_language: "gsw-Latn1234" }],
      [{ schema_id: 1, target_language: "de", source_language: "en" }, { schema_id: 1, target_language: "de", source_language: "en" }],
    ],
    refused: [
      { schema_id: 0, target_language: "de" },
      { schema_id: 1, target_language: "DE" },
      { schema_id: 1, target_language: "d" },
      { schema_id: 1, target_language: "deut" },
      { schema_id: 1, target_language: "de-" },
      { schema_id: 1, target_language: "de-x" },
      { schema_id: 1, target_language: "de-abcdefghi" },
      { schema_id: 1, target_language: "xde" + "-BR!" },
      { schema_id: 1, target_language: "de", source_language: "EN" },
      { schema_id: 1, target_language: "de", source_language: "en_US" },
      { schema_id: 1, target_language: "de", source_language: "Xen" },
      { schema_id: 1, target_language: "de", source_language: "en-" },
    ],
  },
];

/** Kinds whose queued jobs their owner may not cancel: the notices and the payout (api/policies/job.ts). */
const ADMIN_CANCELS = ["emails__send", "push__send", "payouts__process", "payments__refund"];

t.test("every kind of the service is described here", async (t) => {
  const exported = Object.values(kinds).map((k) => (k as JobKind).name).sort();
  t.same(cases.map((c) => c.name).sort(), exported);
});

for (const c of cases) {
  t.test(c.name, async (t) => {
    t.equal(c.kind.name, c.name);
    t.equal(c.kind.maxAttempts, c.maxAttempts);
    t.notOk("queueName" in c.kind, "no dedicated queue");
    t.equal(c.kind.ownerMayCancel, !ADMIN_CANCELS.includes(c.name), ADMIN_CANCELS.includes(c.name) ? "only an administrator cancels it" : "its owner may cancel it");
    for (const [input, output] of c.ok) {
      const parsed = c.kind.payload.safeParse(input);
      t.ok(parsed.success, `takes ${JSON.stringify(input).slice(0, 120)}`);
      t.same(parsed.data, output);
    }
    for (const input of c.refused) {
      t.notOk(c.kind.payload.safeParse(input).success, `refuses ${JSON.stringify(input)?.slice(0, 120)}`);
    }
  });
}
