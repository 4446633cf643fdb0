/**
 * The static checks of `npm test`: the type-check (tsc) and the linter (typed ESLint rules)
 * run side by side, as each uses one core for a minute or more. Each one's output is printed
 * when it ends; the exit status is non-zero when either fails.
 */
import { spawn } from "node:child_process";

const checks = [
  { name: "typecheck", command: "tsc", args: ["-p", "tsconfig.json"] },
  { name: "lint", command: "eslint", args: ["--max-warnings", "0", "."] },
];

const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;

const results = await Promise.all(
  checks.map(
    (check) =>
      new Promise<{ name: string; code: number; output: string; ms: number }>((resolve) => {
        const started = Date.now();
        const child = spawn(bin(check.command), check.args, { stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.on("error", (error) => resolve({ name: check.name, code: 1, output: `${output}${error.message}\n`, ms: Date.now() - started }));
        child.on("close", (code, signal) => resolve({ name: check.name, code: code ?? (signal ? 1 : 0), output, ms: Date.now() - started }));
      }),
  ),
);
for (const result of results) {
  process.stdout.write(`${result.name}: ${result.code === 0 ? "passed" : `FAILED (exit ${result.code})`} in ${(result.ms / 1000).toFixed(1)} s\n${result.output}`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
