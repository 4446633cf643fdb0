/**
 * Reading what a protocol peer received: a local directory as a map of relative path to
 * bytes, for comparing with the files a deployment sent.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Every regular file under `root`, keyed by its `/`-separated relative path. */
export async function readTree(root: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (dir: string, prefix: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), relative);
      else if (entry.isFile()) out.set(relative, await readFile(path.join(dir, entry.name)));
    }
  };
  await walk(root, "");
  return out;
}

/** The same map as plain text per path, for readable test diffs. */
export function asText(tree: Map<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...tree].sort(([a], [b]) => a.localeCompare(b)).map(([name, content]) => [name, content.toString("latin1")]));
}
