/**
 * The operator CLI: `schemaforge <command>`. Configuration problems are printed one line
 * each, and the process exits with status 1.
 */
import { ConfigError } from "../config.ts";
import { migrateCommand, startCommand, webCommand, workerCommand } from "./commands.ts";
import { readConfig } from "./runtime.ts";
import { jobsStatsCommand, oauthClientCommand, UsageError, userCreateCommand } from "./adminCommands.ts";

const commands: Record<string, { run: (args: string[]) => Promise<void>; help: string }> = {
  start: { run: async () => startCommand(await readConfig()), help: "migrate, then run the API and one worker in this process" },
  web: { run: async () => webCommand(await readConfig()), help: "run the API and WebSocket server" },
  worker: { run: async () => workerCommand(await readConfig()), help: "run a job worker" },
  migrate: { run: async () => migrateCommand(await readConfig()), help: "apply pending database migrations" },
  "user:create": {
    run: async (args) => userCreateCommand(await readConfig(), args),
    help: "create a user: --email E [--name N] [--username U] [--password P] [--role admin]... [--unverified]",
  },
  "oauth:client": { run: async (args) => oauthClientCommand(await readConfig(), args), help: "create an OAuth client: --name N [--id ID]" },
  "jobs:stats": { run: async (args) => jobsStatsCommand(await readConfig(), args), help: "queue depth, last hour's throughput and failures, live workers (as GET /api/admin/jobs/stats): [--json]" },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return `Usage: schemaforge <command>\n\nCommands:\n${Object.entries(commands)
    .map(([name, c]) => `  ${name.padEnd(width)}  ${c.help}`)
    .join("\n")}\n`;
}

const [name, ...args] = process.argv.slice(2);
const command = name ? commands[name] : undefined;
if (!command) {
  process.stderr.write(name && name !== "help" && name !== "--help" ? `Unknown command "${name}".\n\n${usage()}` : usage());
  process.exit(name && name !== "help" && name !== "--help" ? 2 : 0);
}

try {
  await command.run(args);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`Cannot start: the configuration is invalid.\n${error.problems.map((p) => `  - ${p}`).join("\n")}\n`);
  } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`${name}: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
}
