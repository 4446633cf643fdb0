/**
 * The FTP deployer: upload a generation into a staging folder over a pool of parallel
 * connections, then swap it into `remote_path` (ftpSwap.ts).
 *
 * Throughput comes from the pool: FTP sends one file per data connection and waits for
 * its reply, so one connection spends most of its time on round trips; N connections keep
 * N transfers in flight. If the server refuses some of the extra connections (per-user
 * limits are common on shared hosting), the upload continues with those it got.
 */
import { posix } from "node:path";
import { Readable } from "node:stream";
import type { Client } from "basic-ftp";
import { resolvePublicAddress, type ResolvedAddress } from "../../net/networkGuard.ts";
import { ftpConfigSchema, parseConfig, type FtpConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { eachFile, joinRemote, parentDirectories, safeId } from "../files.ts";
import { runPool } from "../pool.ts";
import { createRunLog, formatBytes, runLogged, UploadProgress, type RunLog } from "../runLog.ts";
import { scrubberFor, type Scrubber } from "../scrub.ts";
import { memoryState } from "../state.ts";
import type { ConnectionTestResult, Deployer, DeployFiles, DeployRequest, DeployResult, TestConnectionOptions } from "../types.ts";
import { ftpEndpoint, ftpFailure, isDirectory, makeDirectory, openFtp, type ParsedFtpConfig } from "./ftpSession.ts";
import { ftpLayout, prepareStaging, removePrevious, restoreInterruptedSwap, swapIntoPlace, type FtpLayout } from "./ftpSwap.ts";

/** Default size of the connection pool (see docs/notes/deploy.md for the measurements). */
export const DEFAULT_FTP_CONNECTIONS = 4;

/** The result of an FTP deployment. */
export interface FtpDeployResult extends DeployResult {
  /** The live folder, absolute. */
  remotePath: string;
  /** Connections the upload used. */
  connections: number;
}

const SWAPPED = "ftp.swapped";

/** Deploys over FTP; see the module comment. @throws DeployError */
export async function deployFtp(request: DeployRequest<FtpConfig>): Promise<FtpDeployResult> {
  const scrubber = scrubberFor(request.config);
  const runLog = createRunLog(request.log, scrubber);
  const state = request.state ?? memoryState();
  const clients: Client[] = [];
  const closeAll = () => clients.forEach((client) => client.close());
  request.signal?.addEventListener("abort", closeAll, { once: true });
  try {
    return await runLogged(runLog, scrubber, "FTP deployment", request.signal, async () => {
      const config = parseConfig(ftpConfigSchema, request.config);
      const id = safeId(request.deploymentId);
      const address = await resolvePublicAddress(config.host, request.network);
      await runLog.info(`Connecting to ${ftpEndpoint(config)} as ${config.username}.`, { host: config.host, port: config.port, secure: config.secure ?? false });
      const primary = await openFtp(config, address, scrubber, request.signal);
      clients.push(primary);
      await runLog.info(`Logged in; transfers use passive mode${config.secure ? " over TLS" : ""}.`);
      if (config.passive_mode === false) await runLog.warning("Active mode is not supported; passive mode is used instead.");
      const base = posix.isAbsolute(config.remote_path) ? config.remote_path : posix.join(await primary.pwd(), config.remote_path);
      const layout = ftpLayout(base, id);

      const done = await state.get(SWAPPED);
      if (done) return finishedEarlier(primary, layout, runLog, config, done);
      await step(config, scrubber, "preparation", () => restoreInterruptedSwap(primary, layout, runLog));
      await step(config, scrubber, "preparation", () => prepareStaging(primary, layout, runLog));
      await runLog.info(`Uploading into ${layout.staging}.`, { staging: layout.staging });

      let progress: UploadProgress;
      try {
        progress = await uploadAll({ config, address, scrubber, runLog, clients, files: request.files, root: layout.staging, signal: request.signal });
      } catch (error) {
        if (!request.signal?.aborted) await discardStaging(config, address, scrubber, runLog, clients, layout);
        throw error;
      }
      await runLog.info(`Uploaded ${progress.files} files (${formatBytes(progress.bytes)}); switching ${layout.target} to the new version.`);
      const replaced = await step(config, scrubber, "swap", () => swapIntoPlace(primary, layout));
      const result: FtpDeployResult = {
        summary: `Deployed ${progress.files} files (${formatBytes(progress.bytes)}) to ${ftpEndpoint(config)}${layout.target}.`,
        files: progress.files,
        bytes: progress.bytes,
        remotePath: layout.target,
        connections: clients.length,
      };
      await state.set(SWAPPED, JSON.stringify(result));
      await runLog.info(replaced ? `${layout.target} now serves the new version.` : `Created ${layout.target}.`);
      await removePrevious(primary, layout, runLog);
      await runLog.success(result.summary, { files: result.files, bytes: result.bytes, remote_path: result.remotePath, connections: result.connections });
      return result;
    });
  } finally {
    request.signal?.removeEventListener("abort", closeAll);
    closeAll();
  }
}

/** Runs one FTP step, mapping its errors. */
async function step<T>(config: ParsedFtpConfig, scrubber: Scrubber, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw ftpFailure(error, config, scrubber, name);
  }
}

/** A retry of a deployment whose swap already happened: only the cleanup is left. */
async function finishedEarlier(client: Client, layout: FtpLayout, runLog: RunLog, config: ParsedFtpConfig, saved: string): Promise<FtpDeployResult> {
  const result = JSON.parse(saved) as FtpDeployResult;
  await runLog.info(`An earlier attempt of this deployment already switched ${layout.target}; finishing its cleanup.`);
  await removePrevious(client, layout, runLog);
  await runLog.success(result.summary, { files: result.files, bytes: result.bytes, remote_path: result.remotePath, host: config.host });
  return result;
}

interface UploadJob {
  config: ParsedFtpConfig;
  address: ResolvedAddress;
  scrubber: Scrubber;
  runLog: RunLog;
  /** The pool; holds the logged-in primary connection on entry. */
  clients: Client[];
  files: DeployFiles;
  root: string;
  signal: AbortSignal | undefined;
}

/** Uploads every file under `root` through the pool. */
async function uploadAll(job: UploadJob): Promise<UploadProgress> {
  const wanted = job.config.connections ?? DEFAULT_FTP_CONNECTIONS;
  await openExtraConnections(job, wanted - 1);
  const progress = new UploadProgress(job.runLog);
  const made = new Map<string, Promise<void>>();
  const ensureParents = async (client: Client, path: string) => {
    for (const dir of parentDirectories(path)) {
      let pending = made.get(dir);
      if (!pending) {
        pending = makeDirectory(client, joinRemote(job.root, dir));
        made.set(dir, pending);
      }
      await pending;
    }
  };
  await runPool(
    eachFile(job.files),
    job.clients.length,
    async (file, slot) => {
      const client = job.clients[slot]!;
      try {
        await ensureParents(client, file.path);
        await client.uploadFrom(Readable.from(file.content), joinRemote(job.root, file.path));
      } catch (error) {
        throw ftpFailure(error, job.config, job.scrubber, `upload of ${file.path}`);
      }
      await progress.add(file.content.length);
    },
    job.signal,
  );
  return progress;
}

/** Opens up to `count` more connections; refusals shrink the pool instead of failing. */
async function openExtraConnections(job: UploadJob, count: number): Promise<void> {
  if (count <= 0) return;
  const attempts = await Promise.allSettled(Array.from({ length: count }, () => openFtp(job.config, job.address, job.scrubber, job.signal)));
  for (const attempt of attempts) if (attempt.status === "fulfilled") job.clients.push(attempt.value);
  const refused = attempts.filter((a) => a.status === "rejected").length;
  if (refused > 0) await job.runLog.warning(`The server accepted ${job.clients.length} of ${count + 1} parallel connections; uploading with ${job.clients.length}.`);
  else await job.runLog.info(`Uploading over ${job.clients.length} parallel connections.`);
}

/** Removes a failed upload's staging folder, on a fresh connection if need be. */
async function discardStaging(config: ParsedFtpConfig, address: ResolvedAddress, scrubber: Scrubber, runLog: RunLog, clients: Client[], layout: FtpLayout) {
  if (layout.inPlace) return;
  try {
    let client = clients.find((c) => !c.closed);
    if (!client) {
      client = await openFtp(config, address, scrubber);
      clients.push(client);
    }
    if (await isDirectory(client, layout.staging)) await client.removeDir(layout.staging);
    await runLog.warning(`The upload failed; ${layout.target} was left unchanged and the partial upload removed.`);
  } catch {
    await runLog.warning(`The upload failed; ${layout.target} was left unchanged. The partial upload at ${layout.staging} is removed by the next attempt.`);
  }
}

/** Connects, logs in and looks at `remote_path`; reports instead of throwing. */
export async function testFtpConnection(raw: FtpConfig, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  const scrubber = scrubberFor(raw);
  let client: Client | undefined;
  try {
    const config = parseConfig(ftpConfigSchema, raw);
    const address = await resolvePublicAddress(config.host, options.network);
    client = await openFtp(config, address, scrubber);
    const base = posix.isAbsolute(config.remote_path) ? config.remote_path : posix.join(await client.pwd(), config.remote_path);
    const exists = await isDirectory(client, base);
    return { ok: true, message: `Connected to ${ftpEndpoint(config)} as ${config.username}; ${base} ${exists ? "exists" : "does not exist yet and will be created"}.` };
  } catch (error) {
    const failure = error instanceof DeployError ? error : ftpFailure(error, raw as ParsedFtpConfig, scrubber, "connection test");
    return { ok: false, code: failure.code, message: scrubber.text(failure.message) };
  } finally {
    client?.close();
  }
}

/** The FTP deployer. */
export const ftpDeployer: Deployer<FtpConfig, FtpDeployResult> = { deploy: deployFtp, testConnection: testFtpConnection };
