/**
 * POST /deployments/upload: the spec's multipart form. FTP: ftp_host, ftp_port,
 * ftp_username, ftp_password, ftp_path and files[i] (each file's name is its path in the
 * target folder). SSH: ssh_host, ssh_port, ssh_username, ssh_auth_method, ssh_path,
 * ssh_password or ssh_key, and archive (a zip, checked with the archive reader's limits).
 *
 * The files stay on disk: the zip is checked by inflating each entry and keeping none, then
 * the uploaded files are streamed into storage (shared/deployments/uploadPayload.ts), so a
 * few concurrent uploads of large archives keep the process's memory flat (security review
 * finding 11).
 *
 * The deployment runs at once as a job (`deployments__upload`) and the answer carries its
 * outcome and log (or 202 with the job when it outlives the wait). It belongs to no
 * project, so it leaves no deployment record.
 */
import { z } from "zod";
import { scanZip } from "../../../shared/archive/zipReader.ts";
import { EntryPathSet } from "../../../shared/archive/entryPath.ts";
import { ArchiveError } from "../../../shared/archive/errors.ts";
import type { DeployTarget } from "../../../shared/deploy/index.ts";
import { prepareConfig, targetsOf, assembleConfig } from "../../../shared/deployments/targetConfigs.ts";
import { storeUpload, type UploadOutcome } from "../../../shared/deployments/upload.ts";
import type { UploadSource } from "../../../shared/deployments/uploadPayload.ts";
import { invalid, type FieldErrors } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { deploymentsUpload } from "../../../shared/jobs/kinds.ts";
import { acceptedResponse, respondWithJob } from "../../jobResponse.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { checkTargets } from "./environmentInput.ts";

/** An uploaded file as koa-body (formidable) hands it over. */
interface UploadedFile {
  filepath: string;
  originalFilename?: string | null;
  newFilename?: string;
  size: number;
}

const isUploadedFile = (value: unknown): value is UploadedFile =>
  value !== null && typeof value === "object" && typeof (value as UploadedFile).filepath === "string";

const text = z.string().max(16_384).optional();

const body = z
  .object({
    deployment_method: z.enum(["ftp", "ssh"]),
    ftp_host: text,
    ftp_port: text,
    ftp_username: text,
    ftp_password: text,
    ftp_path: text,
    ssh_host: text,
    ssh_port: text,
    ssh_username: text,
    ssh_auth_method: text,
    ssh_path: text,
    ssh_password: text,
    ssh_key: text,
  })
  .loose();

/** Form field of each config field, for error keys. */
const formField: Record<"ftp" | "ssh", Record<string, string>> = {
  ftp: { host: "ftp_host", port: "ftp_port", username: "ftp_username", password: "ftp_password", remote_path: "ftp_path" },
  ssh: {
    host: "ssh_host",
    port: "ssh_port",
    username: "ssh_username",
    auth_method: "ssh_auth_method",
    password: "ssh_password",
    private_key: "ssh_key",
    remote_path: "ssh_path",
  },
};

/** Renames `ftp_config.host`-style error keys to the form's field names. */
function formErrors(method: "ftp" | "ssh", errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, messages] of Object.entries(errors)) {
    const field = key.replace(`${method}_config.`, "");
    const name = formField[method][field] ?? key;
    out[name] = [...(out[name] ?? []), ...messages.map((m) => m.replace(/The (\w[\w ]*) field/, `The ${name.replace(/_/g, " ")} field`))];
  }
  return out;
}

/** The config of the form, validated like an environment's (secrets included, none stored). */
function formConfig(input: z.infer<typeof body>): Record<string, unknown> {
  const defined = (entries: Record<string, string | undefined>) => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
  if (input.deployment_method === "ftp") {
    return defined({ host: input.ftp_host, port: input.ftp_port, username: input.ftp_username, password: input.ftp_password, remote_path: input.ftp_path });
  }
  return defined({
    host: input.ssh_host,
    port: input.ssh_port,
    username: input.ssh_username,
    auth_method: input.ssh_auth_method,
    password: input.ssh_auth_method === "password" ? input.ssh_password : undefined,
    private_key: input.ssh_auth_method === "key" ? input.ssh_key : undefined,
    remote_path: input.ssh_path,
  });
}

/** The `files[i]` of an FTP form, each named by its (relative) file name. */
function formFiles(input: Record<string, unknown>, maxFiles: number): UploadSource {
  const uploads: UploadedFile[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (!/^files(\[\d*\])?$/.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) if (isUploadedFile(item)) uploads.push(item);
  }
  if (uploads.length === 0) throw invalid({ files: ["The files field must hold at least one file (files[0], files[1], …)."] });
  if (uploads.length > maxFiles) throw invalid({ files: [`At most ${maxFiles} files may be uploaded at once.`] });
  // Portable like generated output: the files land in a folder on a server (often a checkout).
  const paths = new EntryPathSet(true);
  const files: { path: string; file: string; size: number }[] = [];
  for (const upload of uploads) {
    let path: string;
    try {
      path = paths.add(upload.originalFilename || upload.newFilename || "");
    } catch (error) {
      if (error instanceof ArchiveError) throw invalid({ files: [error.message.replace("archive path", "file name")] });
      throw error;
    }
    files.push({ path, file: upload.filepath, size: upload.size });
  }
  return { format: "files", files };
}

/** The SSH form's `archive` zip, checked whole (paths, sizes, ratios, CRCs) without keeping its contents. */
async function archiveFiles(input: Record<string, unknown>, maxFiles: number): Promise<UploadSource> {
  const archive = input.archive;
  if (!isUploadedFile(archive)) throw invalid({ archive: ["The archive field must be a zip file."] });
  try {
    // Its files are deployed as they are: portable like generated output (a `.git` hook, `nul.txt`, `A`/`a`).
    const scanned = await scanZip(archive.filepath, { maxEntries: maxFiles, portable: true });
    if (scanned.files === 0) throw invalid({ archive: ["The archive holds no files."] });
    return { format: "zip", file: archive.filepath };
  } catch (error) {
    if (error instanceof ArchiveError) throw invalid({ archive: [error.message] });
    throw error;
  }
}

const outcomeSchema = z.object({
  status: z.enum(["succeeded", "failed"]),
  summary: z.string().nullable(),
  files: z.number(),
  bytes: z.number(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  logs: z.array(z.object({ type: z.enum(["info", "success", "warning", "error"]), message: z.string(), metadata: z.unknown().optional(), created_at: z.string() })),
});

const route = defineRoute({
  method: "post",
  path: "/deployments/upload",
  summary: "Deploy uploaded files by FTP or an uploaded zip by SSH",
  description:
    "The spec's multipart form. Runs at once; answers 200 with the outcome (`status` `succeeded` or `failed`, with the error) and the log, or 202 with the job when it takes longer than the wait. Hosts are checked by the network guard.",
  tags: ["Deployments"],
  auth: "bearer",
  body,
  bodyKind: "multipart",
  responses: {
    200: { description: "The outcome of the deployment", schema: z.object({ message: z.string(), upload: outcomeSchema }) },
    ...acceptedResponse,
  },
  handler: async (ctx, { body: input }) => {
    const { pool, config, storage } = ctx.deps;
    const user = currentUser(ctx);
    const method = input.deployment_method;
    const given = formConfig(input);
    const prepared = prepareConfig(method, given, null);
    if (!prepared.prepared) throw invalid(formErrors(method, prepared.errors));
    const hostErrors = await checkTargets(targetsOf(method, prepared.prepared.public), config);
    if (Object.keys(hostErrors).length) throw invalid(formErrors(method, hostErrors));
    const maxFiles = config.deployments.uploadMaxFiles;
    const files = method === "ftp" ? formFiles(input, maxFiles) : await archiveFiles(input, maxFiles);
    const secrets = Object.fromEntries(["password", "private_key"].filter((f) => typeof given[f] === "string").map((f) => [f, given[f] as string]));
    const target = { method, config: assembleConfig(prepared.prepared.public, secrets) } as DeployTarget & { method: "ftp" | "ssh" };
    const key = await storeUpload(storage, config.appKey, target, files);
    const job = await enqueue(pool, deploymentsUpload, { upload_key: key }, { userId: user.id });
    await respondWithJob(ctx, job, (row) => {
      const outcome = row.result as UploadOutcome;
      ctx.body = { message: outcome.status === "succeeded" ? "Deployment succeeded." : `Deployment failed: ${outcome.error?.message ?? "unknown error"}`, upload: outcome };
    });
  },
});

export const uploadRoutes = [route];
