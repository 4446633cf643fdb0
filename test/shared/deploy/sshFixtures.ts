/**
 * Running the SSH deployer against the SSH test peer: a peer per test, a config for it, a
 * deployment with its log captured (and a worker death simulated at a chosen log entry),
 * and what the peer's shell ran.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Test } from "tap";
import type { SshConfig } from "../../../shared/deploy/configs.ts";
import { deploySsh } from "../../../shared/deploy/ssh/sshDeploy.ts";
import type { memoryState } from "../../../shared/deploy/state.ts";
import type { DeployFile } from "../../../shared/deploy/types.ts";
import { startSshPeer, type SshPeer, type SshPeerOptions } from "../../support/peers/sshPeer.ts";
import { asText, readTree } from "../../support/peers/tree.ts";
import { captureLog } from "./fixtures.ts";

/** Loopback peers are private addresses: allowed, as ALLOW_PRIVATE_NETWORK_TARGETS does. */
export const network = { allowPrivate: true };

/** A peer closed when the test ends. */
export async function peer(t: Test, options: SshPeerOptions = {}): Promise<SshPeer> {
  const started = await startSshPeer(options);
  t.teardown(() => started.close());
  return started;
}

/** A password config for the peer, deploying to `site` in its home. */
export const configOf = (p: SshPeer, overrides: Partial<SshConfig> = {}): SshConfig => ({
  host: p.host,
  port: p.port,
  username: p.username,
  auth_method: "password",
  password: p.password,
  remote_path: "site",
  ...overrides,
});

/** A temporary folder removed after the test. */
export async function scratch(t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "sf-ssh-test-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Options of one test deployment. */
export interface DeployOptions {
  /** The deployment id (1 when absent). */
  id?: number | string;
  config?: Partial<SshConfig>;
  state?: ReturnType<typeof memoryState>;
  /** Makes the log sink throw once at the first entry matching: the worker dies there. */
  crashAt?: RegExp;
}

/** Deploys `files` to the peer; never throws (the error comes back with the log entries). */
export async function deploy(p: SshPeer, files: DeployFile[], options: DeployOptions = {}) {
  const capture = captureLog();
  let crashAt = options.crashAt;
  const outcome = await deploySsh({
    deploymentId: options.id ?? 1,
    files,
    config: configOf(p, options.config),
    log: async (entry) => {
      await capture.log(entry);
      if (crashAt?.test(entry.message)) {
        crashAt = undefined;
        throw new Error("worker killed");
      }
    },
    network,
    ...(options.state ? { state: options.state } : {}),
  }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...outcome, entries: capture.entries };
}

/** The live release (`<base>/current`) as path → text. */
export const live = async (p: SshPeer, base = "site") => asText(await readTree(path.join(p.home, base, "current")));

/** The commands that extracted an archive. */
export const extractions = (p: SshPeer) => p.stats.execs.filter((command) => command.includes(" tar -x "));

/** The extraction command for a release, exactly as the shell gets it. */
export const extractCommand = (release: string, archive: string) =>
  `mkdir -- '${release}' && tar -x -z --no-same-owner -f - -C '${release}' < '${archive}'; s=$?; rm -f -- '${archive}'; [ "$s" -eq 0 ] || exit "$s"; find '${release}' -type f | wc -l`;
