/**
 * Loads the task definitions in workers/tasks/: one file per task, named after the job
 * kind it runs (`area__verb.ts`), default-exporting `defineTask(kind, run)`.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { TaskDefinition } from "./defineTask.ts";

const tasksDir = fileURLToPath(new URL("./tasks/", import.meta.url));

/** Imports every task file. @throws when a file's name and its kind's name differ. */
export async function loadTaskDefinitions(dir = tasksDir): Promise<TaskDefinition[]> {
  const files = (await readdir(dir)).filter((f) => /^[a-z0-9_]+__[a-z0-9_]+\.ts$/.test(f)).sort();
  const definitions: TaskDefinition[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as { default?: TaskDefinition };
    const definition = mod.default;
    const expected = file.slice(0, -3);
    if (!definition?.kind) throw new Error(`workers/tasks/${file} must default-export defineTask(...)`);
    if (definition.kind.name !== expected) {
      throw new Error(`workers/tasks/${file} runs kind ${definition.kind.name}; the file must be named ${definition.kind.name}.ts`);
    }
    definitions.push(definition);
  }
  return definitions;
}
