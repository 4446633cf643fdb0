/**
 * The common shape of every deployer (FTP, SSH, GitHub, GitLab, Bitbucket).
 *
 * Glossary:
 * - deployment id: the caller's id of the deployment; deployers derive every remote name
 *   from it (temporary folders, release folders, branches), so a retried run finds what an
 *   earlier attempt of the same deployment left and continues instead of starting over.
 * - state: a small key/value store the caller persists per deployment (a jsonb column, say);
 *   deployers note finished steps in it so a retry skips them.
 * - log: the caller's sink for progress entries (a deployment log row plus a `LogAdded`
 *   event); every step of a deployer writes one, with credentials scrubbed.
 */
import type { NetworkPolicy } from "../net/networkGuard.ts";

/** One generated file: a relative POSIX path and its bytes. */
export interface DeployFile {
  /** Relative path inside the deployed tree, `/`-separated (`src/models/User.php`). */
  path: string;
  content: Buffer;
}

/** The files of a generation: a list, or a stream of them to keep memory flat. */
export type DeployFiles = AsyncIterable<DeployFile> | Iterable<DeployFile>;

/** The `type` of a deployment log entry, as the spec names them. */
export type LogType = "info" | "success" | "warning" | "error";

/** One deployment log entry, as the spec's deployment log resource carries it. */
export interface LogEntry {
  type: LogType;
  message: string;
  /** Small structured details (counts, paths, fingerprints); never a credential. */
  metadata?: Record<string, unknown>;
}

/** Persists and publishes one log entry; awaited, so entries keep their order. */
export type DeployLog = (entry: LogEntry) => Promise<void>;

/**
 * Stores an SSH host key seen on the first successful login to a target that had none pinned
 * (the caller's environment). Called once the server accepted the credentials, before any
 * file moves, so a run that fails later has pinned the key too.
 * @throws DeployError `host_key_mismatch` when another connection pinned a different key meanwhile.
 */
export type HostKeyPinner = (fingerprint: string) => Promise<void>;

/** Per-deployment key/value state kept by the caller across retries. */
export interface DeployState {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

/** Everything one deployment run needs. */
export interface DeployRequest<C> {
  /** The caller's deployment id: the idempotency key of every remote name. */
  deploymentId: string | number;
  files: DeployFiles;
  /** The target's configuration (FtpConfig, SshConfig, a git provider config). */
  config: C;
  log: DeployLog;
  /** Aborts the run: connections are closed and the run fails with code `aborted`. */
  signal?: AbortSignal;
  /** Steps finished by earlier attempts; a fresh in-memory state when absent. */
  state?: DeployState;
  /** The SSRF guard's policy (`networkPolicy(config)`), applied to every connection. */
  network: NetworkPolicy;
  /** SSH: stores a first-seen host key; absent when there is nothing to pin it to (the upload form). */
  pinHostKey?: HostKeyPinner;
}

/** What every deployer returns on success. */
export interface DeployResult {
  /** One human sentence for the deployment record. */
  summary: string;
  /** Files and bytes in the deployed tree. */
  files: number;
  bytes: number;
}

/** Options of a connection test. */
export interface TestConnectionOptions {
  network: NetworkPolicy;
  signal?: AbortSignal;
  /** SSH: stores a first-seen host key (a stored environment's test); absent for inline configs. */
  pinHostKey?: HostKeyPinner;
}

/** The answer of `testConnection`: it reports failures instead of throwing them. */
export interface ConnectionTestResult {
  ok: boolean;
  /** Human-readable outcome, credentials scrubbed. */
  message: string;
  /** Stable code of the failure (a DeployErrorCode) when `ok` is false. */
  code?: string;
  /** SSH only: the server's host key fingerprint (`SHA256:…`), to pin for the environment. */
  hostKeyFingerprint?: string;
}

/** A deployer: one per target kind, all with the same two operations. */
export interface Deployer<C, R extends DeployResult = DeployResult> {
  deploy(request: DeployRequest<C>): Promise<R>;
  testConnection(config: C, options: TestConnectionOptions): Promise<ConnectionTestResult>;
}
