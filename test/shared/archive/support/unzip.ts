/**
 * The system Info-ZIP `unzip` as the archive tests' independent judge: `unzip -t` tests every
 * entry's data and CRC, `unzip -l` lists names and sizes, `unzip -p` gives the entries' bytes
 * and extraction puts real files on disk.
 * Names are read in a UTF-8 locale (in the C locale unzip escapes non-ASCII names).
 */
import { spawnSync } from "node:child_process";
import { engineSkip } from "../../../support/engines.ts";

/** A reason to skip when `unzip` is not on PATH, else false (for tap's `skip` option; with CI=true it also fails). */
export const unzipMissing: string | false = engineSkip(
  spawnSync("unzip", ["-v"]).status === 0 ? false : "the system `unzip` command is not on PATH; install Info-ZIP unzip to run this test",
);

/** A reason to skip when `zip` is not on PATH, else false. */
export const zipMissing: string | false = engineSkip(
  spawnSync("zip", ["-v"]).status === 0 ? false : "the system `zip` command is not on PATH; install Info-ZIP zip to run this test",
);

/** Runs unzip with `args`; returns its exit status and output. */
export function unzip(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync("unzip", args, { encoding: "utf8", env: { ...process.env, LC_ALL: "C.UTF-8" }, maxBuffer: 64 * 1024 * 1024 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** The names `unzip -l` lists for an archive, in order. */
export function unzipNames(file: string): string[] {
  const { stdout } = unzip("-l", file);
  const lines = stdout.split("\n");
  const dashes = lines.flatMap((line, i) => (/^-{9}/.test(line) ? [i] : []));
  return lines.slice(dashes[0]! + 1, dashes[1]).map((line) => /^\s*\d+\s+\S+\s+\S+\s{3}(.*)$/.exec(line)![1]!);
}

/** The names and sizes `unzip -l` lists for an archive, in order. */
export function unzipSizes(file: string): [string, number][] {
  const { stdout } = unzip("-l", file);
  const lines = stdout.split("\n");
  const dashes = lines.flatMap((line, i) => (/^-{9}/.test(line) ? [i] : []));
  return lines.slice(dashes[0]! + 1, dashes[1]).map((line) => {
    const [, size, name] = /^\s*(\d+)\s+\S+\s+\S+\s{3}(.*)$/.exec(line)!;
    return [name!, Number(size)];
  });
}

/** Every entry's bytes as `unzip -p` writes them, one after another in archive order. */
export function unzipPiped(file: string): Buffer {
  return spawnSync("unzip", ["-p", file], { env: { ...process.env, LC_ALL: "C.UTF-8" }, maxBuffer: 256 * 1024 * 1024 }).stdout;
}
