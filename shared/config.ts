/**
 * Configuration: the environment, read once and validated with zod.
 *
 * Every variable the service reads is declared here and documented in the README.
 * `loadConfig` never reads `process.env` behind the caller's back: the CLI passes the
 * environment in (after filling development defaults from `.data/`), tests pass their own.
 */
import { z } from "zod";
import { wholeDigits } from "./canonicalNumbers.ts";

const booleanString = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off", ""])
  .transform((value) => ["true", "1", "yes", "on"].includes(value));

/**
 * A whole number in plain digits, surrounding white space allowed (env files carry it). Not
 * zod's coercion: `Number(text)` also reads "0x50" as 80, "1e3" as 1000 and white space alone
 * as 0, so a typo would start the service on a port or with a limit nobody wrote.
 */
const integer = (min: number, max: number) => {
  const error = `expected an integer between ${min} and ${max}, in digits`;
  return z.preprocess(
    (value) => (typeof value === "string" && wholeDigits.test(value.trim()) ? Number(value.trim()) : value),
    z.number({ error }).int({ error }).min(min, { error }).max(max, { error }),
  );
};

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), {
    error: "expected a postgres:// connection URL",
  });

/** A 32-byte key, given as 64 hex characters or as base64 (optionally prefixed `base64:`). */
const appKey = z.string().transform((value, ctx) => {
  const raw = value.startsWith("base64:") ? value.slice(7) : value;
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64");
  if (key.length !== 32) {
    ctx.addIssue({ code: "custom", message: "expected 32 bytes as 64 hex characters or base64" });
    return z.NEVER;
  }
  return key;
});

/** An http(s) base URL, kept without a trailing slash. */
const httpBase = z
  .url({ protocol: /^https?$/, error: "expected an http(s) URL" })
  .transform((value) => value.replace(/\/+$/, ""));

const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

/** The environment variables the service understands, with their defaults. */
export const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  APP_URL: z.url({ error: "expected an absolute URL such as https://codegen.example.com" }).optional(),
  FRONTEND_URL: z.url({ error: "expected an absolute URL such as https://app.example.com" }).optional(),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_SIZE: integer(1, 500).default(10),
  DATA_DIR: z.string().min(1).default(".data"),
  APP_KEY: appKey,
  REALTIME_APP_ID: z.string().min(1).default("schemaforge"),
  REALTIME_APP_KEY: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/, { error: "expected 8-128 letters, digits, - or _" }),
  REALTIME_APP_SECRET: z.string().min(16, { error: "expected at least 16 characters" }),
  REALTIME_ACTIVITY_TIMEOUT_S: integer(1, 600).default(120),
  REALTIME_PONG_TIMEOUT_S: integer(1, 600).default(30),
  REALTIME_REAUTH_S: integer(1, 86_400).default(300),
  OAUTH_CLIENT_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, { error: "expected 1-128 letters, digits, dots, dashes or underscores" })
    .optional(),
  OAUTH_CLIENT_SECRET: z.string().min(16, { error: "expected at least 16 characters" }).optional(),
  OAUTH_JWKS: z
    .string()
    .refine((v) => {
      try {
        return Array.isArray((JSON.parse(v) as { keys?: unknown }).keys);
      } catch {
        return false;
      }
    }, { error: 'expected a JSON private key set {"keys": [...]}' })
    .optional(),
  RATE_LIMIT_USER_PER_HOUR: integer(1, 100_000_000).default(1000),
  RATE_LIMIT_PUBLIC_PER_HOUR: integer(1, 100_000_000).default(100),
  LOGIN_MAX_ATTEMPTS: integer(1, 1000).default(5),
  LOGIN_LOCKOUT_S: integer(1, 86_400).default(900),
  SMTP_URL: z.url({ error: "expected a URL such as smtp://user:pass@mail.example.com:587" }).optional(),
  MAIL_FROM: z.string().min(3).default("SchemaForge <no-reply@localhost>"),
  WORKER_CONCURRENCY: integer(1, 256).default(4),
  WORKER_POLL_INTERVAL_MS: integer(100, 60_000).default(2000),
  WORKER_HEARTBEAT_MS: integer(100, 60_000).default(5000),
  WORKER_STALE_AFTER_MS: integer(500, 600_000).default(15_000),
  SYNC_WAIT_MS: integer(0, 120_000).default(10_000),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(10_000),
  BODY_LIMIT_BYTES: integer(1024, 100 * 1024 * 1024).default(1024 * 1024),
  UPLOAD_LIMIT_BYTES: integer(1024, 2 * 1024 * 1024 * 1024).default(20 * 1024 * 1024),
  UPLOADS_PER_USER: integer(1, 1000).default(4),
  ATTACHMENT_LINK_TTL_MINUTES: integer(1, 7 * 24 * 60).default(15),
  LOG_LEVEL: logLevel.default("info"),
  TRUST_PROXY: booleanString.default(false),
  METRICS_TOKEN: z.string().min(16, { error: "expected at least 16 characters" }).optional(),
  /** In production /metrics needs METRICS_TOKEN unless this says, explicitly, that it is public. */
  METRICS_PUBLIC: booleanString.default(false),
  ALLOW_PRIVATE_NETWORK_TARGETS: booleanString.default(false),
  SCHEMA_SQL_MAX_BYTES: integer(1024, 100 * 1024 * 1024).default(5 * 1024 * 1024),
  SCHEMA_PARSE_TIMEOUT_MS: integer(100, 600_000).default(20_000),
  TEMPLATE_CODE_TIME_LIMIT_MS: integer(10, 60_000).default(250),
  TEMPLATE_RENDER_TIME_LIMIT_MS: integer(100, 600_000).default(10_000),
  TEMPLATE_CODE_MEMORY_MB: integer(8, 1024).default(32),
  TEMPLATE_SANDBOX_WORKERS: integer(1, 32).default(2),
  TEMPLATE_COMPILE_WORKERS: integer(1, 16).default(1),
  TEMPLATE_COMPILE_TIME_LIMIT_MS: integer(100, 600_000).default(30_000),
  TEMPLATE_COMPILE_MEMORY_MB: integer(64, 8192).default(512),
  ARCHIVE_TTL_HOURS: integer(1, 24 * 366).default(72),
  DEPLOYMENT_TIMEOUT_S: integer(10, 24 * 3600).default(1800),
  DEPLOYMENT_UPLOAD_MAX_FILES: integer(1, 1_000_000).default(10_000),
  WEBHOOK_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  WEBHOOK_MAX_ATTEMPTS: integer(1, 8).default(8),
  WEBHOOK_DEACTIVATE_AFTER_FAILURES: integer(1, 10_000).default(20),
  MEDIA_MAX_BYTES: integer(1024, 100 * 1024 * 1024).default(5 * 1024 * 1024),
  FORM_DESIGNER_TRIAL_DAYS: integer(0, 365).default(7),
  FORM_DESIGNER_UNLOCK_COST: integer(0, 1_000_000).default(500),
  PAYOUT_MINIMUM_EUR: integer(1, 1_000_000).default(20),
  PAYOUT_HOLD_DAYS: integer(0, 365).default(14),
  PAYOUT_DEBTOR_NAME: z.string().min(1).max(70).default("SchemaForge"),
  PAYOUT_DEBTOR_IBAN: z.string().regex(/^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$/, { error: "expected an IBAN without spaces" }).optional(),
  STORE_SELLER_SHARE_PERCENT: integer(0, 100).default(70),
  STORE_CREDIT_VALUE_CENTS: integer(0, 100_000).default(10),
  STORE_PLAGIARISM_THRESHOLD: integer(1, 100).default(80),
  GITHUB_CLIENT_ID: z.string().min(1).max(255).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  GITHUB_OAUTH_BASE: httpBase.default("https://github.com"),
  GITHUB_API_BASE: httpBase.default("https://api.github.com"),
  GITLAB_CLIENT_ID: z.string().min(1).max(255).optional(),
  GITLAB_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  GITLAB_URL: httpBase.default("https://gitlab.com"),
  BITBUCKET_CLIENT_ID: z.string().min(1).max(255).optional(),
  BITBUCKET_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  BITBUCKET_OAUTH_BASE: httpBase.default("https://bitbucket.org"),
  BITBUCKET_API_BASE: httpBase.default("https://api.bitbucket.org/2.0"),
  VAPID_PUBLIC_KEY: z.string().regex(/^[A-Za-z0-9_-]{87}$/, { error: "expected an uncompressed P-256 public key, base64url (87 characters)" }).optional(),
  VAPID_PRIVATE_KEY: z.string().regex(/^[A-Za-z0-9_-]{43}$/, { error: "expected a P-256 private key, base64url (43 characters)" }).optional(),
  VAPID_SUBJECT: z.string().regex(/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/, { error: "expected a mailto: address or an https: URL" }).default("mailto:webmaster@localhost"),
  PUSH_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  TRANSLATION_API_URL: httpBase.optional(),
  TRANSLATION_API_KEY: z.string().min(1).max(1024).optional(),
  VISITS_RETENTION_DAYS: integer(1, 3650).default(30),
  GIT_OAUTH_REDIRECT_URL: z
    .url({ error: "expected an absolute URL such as https://app.example.com/git/{provider}/callback" })
    .optional(),
  STRIPE_SECRET_KEY: z.string().min(8).max(1024).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(8).max(1024).optional(),
  STRIPE_API_BASE: httpBase.default("https://api.stripe.com"),
  PAYPAL_CLIENT_ID: z.string().min(1).max(1024).optional(),
  PAYPAL_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  PAYPAL_WEBHOOK_ID: z.string().min(1).max(255).optional(),
  PAYPAL_API_BASE: httpBase.default("https://api-m.paypal.com"),
});

export type Env = z.input<typeof envSchema>;

/** The parsed configuration every part of the service receives. */
export interface Config {
  env: "development" | "production" | "test";
  port: number;
  host: string;
  /** Public base URL, used in links that leave the service (e-mails, Location headers stay relative). */
  appUrl: string;
  /** Base URL of the web client; links in e-mails point there (defaults to APP_URL). */
  frontendUrl: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  dataDir: string;
  /** 32-byte key for AES-256-GCM encryption of secrets at rest and for signed links. */
  appKey: Buffer;
  /** `reauthS`: at the latest, open subscriptions are re-authorized this often (access changes also trigger it at once). */
  realtime: { appId: string; key: string; secret: string; activityTimeoutS: number; pongTimeoutS: number; reauthS: number };
  oauth: { clientId: string | undefined; clientSecret: string | undefined; jwks: string | undefined };
  rateLimit: { userPerHour: number; publicPerHour: number; loginMaxAttempts: number; loginLockoutS: number };
  mail: { smtpUrl: string | undefined; from: string };
  worker: { concurrency: number; pollIntervalMs: number; heartbeatMs: number; staleAfterMs: number };
  syncWaitMs: number;
  shutdownTimeoutMs: number;
  bodyLimitBytes: number;
  uploadLimitBytes: number;
  /** Multipart uploads one account (or one address, without an account) may have in progress at once per web process. */
  uploadsPerUser: number;
  logLevel: z.infer<typeof logLevel>;
  trustProxy: boolean;
  metricsToken: string | undefined;
  /** /metrics may be open in production (METRICS_PUBLIC); without it a production web process needs METRICS_TOKEN. */
  metricsPublic: boolean;
  allowPrivateNetworkTargets: boolean;
  /** Largest SQL text a schema or a stand-alone parse accepts, and how long one parse may run. */
  schemas: { sqlMaxBytes: number; parseTimeoutMs: number };
  /** Sandbox limits of template code blocks, and how long a generation's zip is kept. */
  /** `sandboxWorkers`: code sandbox threads per process, so one slow render cannot hold up the others. */
  /** `compile`: the threads a web process checks templates on, and one check's time and heap limits. */
  templates: {
    codeTimeLimitMs: number;
    codeMemoryBytes: number;
    renderTimeLimitMs: number;
    sandboxWorkers: number;
    archiveTtlHours: number;
    compile: { threads: number; timeLimitMs: number; memoryMb: number };
  };
  /** How long one deployment run may take, and how many files the upload form accepts. */
  deployments: { timeoutMs: number; uploadMaxFiles: number };
  /** Outbound webhook deliveries: request timeout, attempts per delivery, failed deliveries in a row before deactivation. */
  webhooks: { timeoutMs: number; maxAttempts: number; deactivateAfterFailures: number };
  /** Uploaded images (template media): the largest file accepted. */
  media: { maxBytes: number };
  /** Web Push (VAPID); without both keys push notifications are off. */
  push: { vapidPublicKey: string | undefined; vapidPrivateKey: string | undefined; vapidSubject: string; timeoutMs: number };
  /** Automatic translation through a DeepL-shaped API; off without both. */
  translation: { apiUrl: string | undefined; apiKey: string | undefined };
  /** Raw page views older than this are rolled up into daily figures and deleted. */
  visits: { retentionDays: number };
  /** Attachments of kanban comments and messages: how long a signed download link works. */
  attachments: { linkTtlMs: number };
  /** Form designer access: the trial's length (0: no trial) and the one-time unlock's price in credits. */
  formDesigner: { trialDays: number; unlockCost: number };
  /**
   * Template store: payouts (minimum in euro cents, refund hold in days, the debtor of SEPA
   * transfer files), the seller's share of a sale, what one credit is worth to a seller, and
   * the similarity (0–100) from which a publish is held as a possible duplicate.
   */
  store: {
    payoutMinimumCents: number;
    payoutHoldDays: number;
    debtorName: string;
    debtorIban: string | undefined;
    sellerSharePercent: number;
    creditValueCents: number;
    plagiarismThreshold: number;
  };
  /** Git provider sign-in (OAuth apps) and the hosts' addresses; a provider without a client id is off. */
  git: {
    github: { clientId: string | undefined; clientSecret: string | undefined; oauthBase: string; apiBase: string };
    gitlab: { clientId: string | undefined; clientSecret: string | undefined; url: string };
    bitbucket: { clientId: string | undefined; clientSecret: string | undefined; oauthBase: string; apiBase: string };
    /** Where providers send the browser back; `{provider}` is replaced. */
    redirectUrl: string;
  };
  /** Payment providers; one whose keys are unset is off (its routes answer 503). */
  payments: {
    stripe: { secretKey: string | undefined; webhookSecret: string | undefined; apiBase: string };
    paypal: { clientId: string | undefined; clientSecret: string | undefined; webhookId: string | undefined; apiBase: string };
  };
}

/** Thrown by `loadConfig`; `problems` holds one line per bad or missing variable. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((line) => `  ${line}`).join("\n")}`);
    this.problems = problems;
  }
}

/**
 * Parses the environment into a `Config`.
 * @throws ConfigError listing every bad or missing variable, one line each.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = envSchema.safeParse(cleaned);
  // The first-party client is a pair: half of it would silently fall back to another client.
  const pairProblems: string[] = [];
  if (cleaned.OAUTH_CLIENT_ID && !cleaned.OAUTH_CLIENT_SECRET) {
    pairProblems.push("OAUTH_CLIENT_SECRET is missing: required when OAUTH_CLIENT_ID is set (set both, or neither)");
  }
  if (cleaned.OAUTH_CLIENT_SECRET && !cleaned.OAUTH_CLIENT_ID) {
    pairProblems.push("OAUTH_CLIENT_ID is missing: required when OAUTH_CLIENT_SECRET is set (set both, or neither)");
  }
  if (Boolean(cleaned.VAPID_PUBLIC_KEY) !== Boolean(cleaned.VAPID_PRIVATE_KEY)) {
    pairProblems.push(`${cleaned.VAPID_PUBLIC_KEY ? "VAPID_PRIVATE_KEY" : "VAPID_PUBLIC_KEY"} is missing: push notifications need both VAPID keys (set both, or neither)`);
  }
  for (const provider of ["GITHUB", "GITLAB", "BITBUCKET"]) {
    const [id, secret] = [`${provider}_CLIENT_ID`, `${provider}_CLIENT_SECRET`];
    if (Boolean(cleaned[id]) !== Boolean(cleaned[secret])) pairProblems.push(`${cleaned[id] ? secret : id} is missing: the ${provider.toLowerCase()} sign-in needs both ${id} and ${secret}`);
  }
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "environment");
      const given = cleaned[name];
      const missing = given === undefined;
      const shown = missing ? "is missing" : `has the invalid value ${JSON.stringify(redact(name, given))}`;
      return `${name} ${shown}: ${missing && issue.code === "invalid_type" ? "required" : issue.message}`;
    });
    throw new ConfigError([...problems, ...pairProblems]);
  }
  if (pairProblems.length) throw new ConfigError(pairProblems);
  const e = parsed.data;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    appUrl: (e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    frontendUrl: (e.FRONTEND_URL ?? e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    dataDir: e.DATA_DIR,
    appKey: e.APP_KEY,
    realtime: {
      appId: e.REALTIME_APP_ID,
      key: e.REALTIME_APP_KEY,
      secret: e.REALTIME_APP_SECRET,
      activityTimeoutS: e.REALTIME_ACTIVITY_TIMEOUT_S,
      pongTimeoutS: e.REALTIME_PONG_TIMEOUT_S,
      reauthS: e.REALTIME_REAUTH_S,
    },
    oauth: { clientId: e.OAUTH_CLIENT_ID, clientSecret: e.OAUTH_CLIENT_SECRET, jwks: e.OAUTH_JWKS },
    rateLimit: {
      userPerHour: e.RATE_LIMIT_USER_PER_HOUR,
      publicPerHour: e.RATE_LIMIT_PUBLIC_PER_HOUR,
      loginMaxAttempts: e.LOGIN_MAX_ATTEMPTS,
      loginLockoutS: e.LOGIN_LOCKOUT_S,
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    worker: {
      concurrency: e.WORKER_CONCURRENCY,
      pollIntervalMs: e.WORKER_POLL_INTERVAL_MS,
      heartbeatMs: e.WORKER_HEARTBEAT_MS,
      staleAfterMs: e.WORKER_STALE_AFTER_MS,
    },
    syncWaitMs: e.SYNC_WAIT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    uploadLimitBytes: e.UPLOAD_LIMIT_BYTES,
    uploadsPerUser: e.UPLOADS_PER_USER,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    metricsToken: e.METRICS_TOKEN,
    metricsPublic: e.METRICS_PUBLIC,
    allowPrivateNetworkTargets: e.ALLOW_PRIVATE_NETWORK_TARGETS,
    schemas: { sqlMaxBytes: e.SCHEMA_SQL_MAX_BYTES, parseTimeoutMs: e.SCHEMA_PARSE_TIMEOUT_MS },
    templates: {
      codeTimeLimitMs: e.TEMPLATE_CODE_TIME_LIMIT_MS,
      renderTimeLimitMs: e.TEMPLATE_RENDER_TIME_LIMIT_MS,
      codeMemoryBytes: e.TEMPLATE_CODE_MEMORY_MB * 1024 * 1024,
      sandboxWorkers: e.TEMPLATE_SANDBOX_WORKERS,
      archiveTtlHours: e.ARCHIVE_TTL_HOURS,
      compile: { threads: e.TEMPLATE_COMPILE_WORKERS, timeLimitMs: e.TEMPLATE_COMPILE_TIME_LIMIT_MS, memoryMb: e.TEMPLATE_COMPILE_MEMORY_MB },
    },
    deployments: { timeoutMs: e.DEPLOYMENT_TIMEOUT_S * 1000, uploadMaxFiles: e.DEPLOYMENT_UPLOAD_MAX_FILES },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      deactivateAfterFailures: e.WEBHOOK_DEACTIVATE_AFTER_FAILURES,
    },
    media: { maxBytes: e.MEDIA_MAX_BYTES },
    push: { vapidPublicKey: e.VAPID_PUBLIC_KEY, vapidPrivateKey: e.VAPID_PRIVATE_KEY, vapidSubject: e.VAPID_SUBJECT, timeoutMs: e.PUSH_TIMEOUT_MS },
    translation: { apiUrl: e.TRANSLATION_API_URL, apiKey: e.TRANSLATION_API_KEY },
    visits: { retentionDays: e.VISITS_RETENTION_DAYS },
    attachments: { linkTtlMs: e.ATTACHMENT_LINK_TTL_MINUTES * 60_000 },
    formDesigner: { trialDays: e.FORM_DESIGNER_TRIAL_DAYS, unlockCost: e.FORM_DESIGNER_UNLOCK_COST },
    store: {
      payoutMinimumCents: e.PAYOUT_MINIMUM_EUR * 100,
      payoutHoldDays: e.PAYOUT_HOLD_DAYS,
      debtorName: e.PAYOUT_DEBTOR_NAME,
      debtorIban: e.PAYOUT_DEBTOR_IBAN,
      sellerSharePercent: e.STORE_SELLER_SHARE_PERCENT,
      creditValueCents: e.STORE_CREDIT_VALUE_CENTS,
      plagiarismThreshold: e.STORE_PLAGIARISM_THRESHOLD,
    },
    git: {
      github: { clientId: e.GITHUB_CLIENT_ID, clientSecret: e.GITHUB_CLIENT_SECRET, oauthBase: e.GITHUB_OAUTH_BASE, apiBase: e.GITHUB_API_BASE },
      gitlab: { clientId: e.GITLAB_CLIENT_ID, clientSecret: e.GITLAB_CLIENT_SECRET, url: e.GITLAB_URL },
      bitbucket: { clientId: e.BITBUCKET_CLIENT_ID, clientSecret: e.BITBUCKET_CLIENT_SECRET, oauthBase: e.BITBUCKET_OAUTH_BASE, apiBase: e.BITBUCKET_API_BASE },
      redirectUrl: e.GIT_OAUTH_REDIRECT_URL ?? `${(e.FRONTEND_URL ?? e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "")}/git/{provider}/callback`,
    },
    payments: {
      stripe: { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE },
      paypal: { clientId: e.PAYPAL_CLIENT_ID, clientSecret: e.PAYPAL_CLIENT_SECRET, webhookId: e.PAYPAL_WEBHOOK_ID, apiBase: e.PAYPAL_API_BASE },
    },
  };
}

function redact(name: string, value: string): string {
  return /KEY|SECRET|TOKEN|PASSWORD|URL|JWKS/.test(name) ? "<redacted>" : value;
}
