import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import zlib from "node:zlib";
import t from "tap";
import { AppError } from "../../../shared/errors.ts";
import { ArchiveError } from "../../../shared/archive/errors.ts";
import { extractToMemory, readZip, type ZipReadLimits } from "../../../shared/archive/zipReader.ts";
import { createZipStream, type ZipEntryInput } from "../../../shared/archive/zipWriter.ts";
import { craftZip, type CraftEntry } from "./support/craft.ts";
import { zipMissing } from "./support/unzip.ts";

const dir = await mkdtemp(path.join(tmpdir(), "zip-reader-test-"));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const ours = (entries: ZipEntryInput[]) => buffer(createZipStream(entries));

/** The refusal `source` meets, as {code, entry}, or null when it reads cleanly. */
async function refusal(source: Buffer | string, limits?: Partial<ZipReadLimits>) {
  try {
    await extractToMemory(source, limits);
    return null;
  } catch (error) {
    if (!(error instanceof ArchiveError)) throw error;
    return { code: error.code, entry: error.entry, status: error.status, message: error.message };
  }
}

t.test("round-trips archives made by our writer, from a Buffer and from a file", async (t) => {
  const inputs = new Map<string, Buffer>([
    ["src/app.ts", Buffer.from("export const app = 1;\n".repeat(500))],
    ["empty.txt", Buffer.alloc(0)],
    ["名前/ünïcødé.md", Buffer.from("# 名前\n")],
    ["random.bin", randomBytes(300_000)],
    ["streamed.txt", Buffer.from("streamed\n".repeat(50_000))],
  ]);
  const zip = await ours([...inputs].map(([p, c]) => ({ path: p, content: p === "streamed.txt" ? Readable.from([c]) : c, mode: p.endsWith(".ts") ? 0o600 : undefined })));
  const fromBuffer = await extractToMemory(zip);
  t.same(fromBuffer.map((e) => e.path), [...inputs.keys()]);
  for (const entry of fromBuffer) t.ok(entry.content.equals(inputs.get(entry.path)!), `${entry.path} byte for byte`);
  t.equal(fromBuffer[0]!.mode, 0o600);
  const file = path.join(dir, "ours.zip");
  await writeFile(file, zip);
  const fromFile = [];
  for await (const entry of readZip(file)) fromFile.push(entry.path);
  t.same(fromFile, [...inputs.keys()]);
});

t.test("round-trips archives made by the system zip command", { skip: zipMissing }, async (t) => {
  const root = path.join(dir, "tree");
  const inputs = new Map<string, Buffer>([
    ["README.md", Buffer.from("# readme\n")],
    ["src/deep/nested/file.ts", Buffer.from("export {};\n".repeat(1000))],
    ["src/ünïcødé 名前.txt", Buffer.from("unicode name")],
    ["empty", Buffer.alloc(0)],
    ["bin/random", randomBytes(50_000)],
  ]);
  for (const [p, c] of inputs) {
    await mkdir(path.dirname(path.join(root, p)), { recursive: true });
    await writeFile(path.join(root, p), c);
  }
  await mkdir(path.join(root, "empty-dir"));
  for (const [name, flags] of [["deflated", ["-r"]], ["stored", ["-r", "-0"]], ["zip64", ["-r", "-fz"]]] as const) {
    const file = path.join(dir, `system-${name}.zip`);
    const res = spawnSync("zip", ["-q", ...flags, file, "."], { cwd: root, env: { ...process.env, LC_ALL: "C.UTF-8" } });
    t.equal(res.status, 0, String(res.stderr));
    const files = await extractToMemory(file);
    t.same(files.map((f) => f.path).sort(), [...inputs.keys()].sort(), `${name}: every file, no folder entries`);
    for (const f of files) t.ok(f.content.equals(inputs.get(f.path)!), `${name}: ${f.path} byte for byte`);
  }
});

t.test("a symlink stored by zip -y is refused", { skip: zipMissing }, async (t) => {
  const root = path.join(dir, "links");
  await mkdir(root);
  await writeFile(path.join(root, "real.txt"), "real");
  await symlink("/etc/passwd", path.join(root, "passwd"));
  const file = path.join(dir, "symlink.zip");
  t.equal(spawnSync("zip", ["-q", "-y", file, "real.txt", "passwd"], { cwd: root }).status, 0);
  t.match(await refusal(file), { code: "archive_symlink", entry: "passwd", status: 422 });
});

t.test("zip-slip and other unsafe names are refused before anything is inflated", async (t) => {
  const names = ["../evil.sh", "a/../../evil.sh", "/etc/cron.d/evil", "C:/Windows/evil.dll", "a\\..\\..\\evil", "evil\u0000.txt", "evil\n.txt", "../dir/"];
  for (const name of names) {
    const zip = craftZip([{ name: "fine.txt", data: "fine" }, { name, data: "payload" }]);
    const yielded: string[] = [];
    const error = await (async () => {
      try {
        for await (const entry of readZip(zip)) yielded.push(entry.path);
      } catch (e) {
        return e;
      }
    })();
    t.match(error, { code: "archive_unsafe_path" }, JSON.stringify(name));
    t.same(yielded, [], "not even the safe entry before it is yielded");
  }
  t.match(await refusal(craftZip([{ name: Buffer.from([0x61, 0xff, 0x2e]), data: "x" }])), { code: "archive_unsafe_path" }, "invalid UTF-8 name");
  t.same((await extractToMemory(craftZip([{ name: Buffer.from([0x63, 0x61, 0x66, 0x82]), data: "x", flags: 0 }])))[0]!.path, "café", "a name without the UTF-8 flag is CP437");
});

t.test("symlinks, devices, encryption and unknown methods are refused", async (t) => {
  const cases: [CraftEntry, string][] = [
    [{ name: "link", data: "/etc/passwd", unixMode: 0o120777 }, "archive_symlink"],
    [{ name: "dir/link", data: "../..", unixMode: 0o120755 }, "archive_symlink"],
    [{ name: "tty", data: "", unixMode: 0o020644 }, "archive_unsupported"],
    [{ name: "fifo", data: "", unixMode: 0o010644 }, "archive_unsupported"],
    [{ name: "secret", data: "x", flags: 0x0801 }, "archive_unsupported"],
    [{ name: "bzip2", data: "x", method: 12 }, "archive_unsupported"],
  ];
  for (const [entry, code] of cases) t.match(await refusal(craftZip([entry])), { code, entry: String(entry.name) }, String(entry.name));
});

t.test("zip bombs are refused", async (t) => {
  const zeros = Buffer.alloc(10 * 1024 * 1024);
  const bomb = craftZip([{ name: "zeros.bin", data: zeros, deflate: true }]);
  t.ok(bomb.length < 20_000, "10 MiB in a few kilobytes");
  t.match(await refusal(bomb), { code: "archive_ratio_exceeded", entry: "zeros.bin" }, "ratio over 200");
  t.equal((await extractToMemory(bomb, { maxRatio: 2000 }))[0]!.content.length, zeros.length, "allowed when the limit says so");
  t.match(await refusal(bomb, { maxEntrySize: 1024 * 1024 }), { code: "archive_entry_too_large" }, "declared size over the entry limit");

  const lying = craftZip([{ name: "liar.bin", data: zeros, deflate: true, declaredSize: 1000 }]);
  const started = performance.now();
  t.match(await refusal(lying), { code: "archive_corrupt", message: /more than its declared 1000 bytes/ }, "actual bytes count, not the header");
  t.ok(performance.now() - started < 1000, "stopped early");

  const many = craftZip(Array.from({ length: 5 }, (_, i) => ({ name: `part${i}`, data: randomBytes(300_000) })));
  t.match(await refusal(many, { maxTotalSize: 1_000_000 }), { code: "archive_too_large" }, "total over the limit");

  const overlapping = craftZip([{ name: "kernel", data: zeros.subarray(0, 1024 * 1024), deflate: true }, ...Array.from({ length: 20 }, (_, i) => ({ name: `copy${i}`, data: zeros.subarray(0, 1024 * 1024), deflate: true, sharesWith: 0 }))]);
  t.match(await refusal(overlapping, { maxRatio: 10_000 }), { code: "archive_corrupt", message: /overlap/ }, "entries sharing their data");
});

t.test("too many entries are refused from the directory count", async (t) => {
  const zip = await ours(Array.from({ length: 101 }, (_, i) => ({ path: `f${i}`, content: "" })));
  t.match(await refusal(zip, { maxEntries: 100 }), { code: "archive_too_many_entries", message: /101 entries; at most 100/ });
  t.equal((await extractToMemory(zip, { maxEntries: 101 })).length, 101);
});

t.test("duplicate names, bad CRCs and broken archives are refused", async (t) => {
  t.match(await refusal(craftZip([{ name: "a.txt", data: "1" }, { name: "./a.txt", data: "2" }])), { code: "archive_duplicate_path" });
  t.match(await refusal(craftZip([{ name: "a.txt", data: "hello", crc: 1234 }])), { code: "archive_corrupt", message: /CRC/ });
  t.match(await refusal(craftZip([{ name: "a.txt", data: "hello", declaredSize: 3 }])), { code: "archive_corrupt", message: /mismatched sizes/ });
  t.match(await refusal(Buffer.from("definitely not a zip archive")), { code: "archive_corrupt", message: /not a valid zip/ });
  const good = await ours([{ path: "a.txt", content: "x".repeat(1000) }]);
  t.match(await refusal(good.subarray(0, good.length - 10)), { code: "archive_corrupt" }, "truncated");
  const garbled = Buffer.from(good);
  garbled.fill(0xaa, 40, 50); // inside a.txt's deflated data
  t.match(await refusal(garbled), { code: "archive_corrupt" }, "garbled data");
  // Broken deflate streams inside an honest entry: zlib's own errors (Z_BUF_ERROR, Z_DATA_ERROR) are a corrupt archive, not a 500.
  const text = "a line of text that deflates well\n".repeat(200);
  const deflated = zlib.deflateRawSync(Buffer.from(text));
  const truncatedStream = craftZip([{ name: "cut.txt", data: text, deflate: true, body: deflated.subarray(0, deflated.length >> 1) }]);
  t.match(await refusal(truncatedStream), { code: "archive_corrupt", message: /not a valid zip/ }, "a deflate stream that ends early");
  const invalidStream = craftZip([{ name: "bad.txt", data: text, deflate: true, body: Buffer.from([0xff, 0xff, 0xff, 0xff, ...deflated.subarray(4)]) }]);
  t.match(await refusal(invalidStream), { code: "archive_corrupt", message: /not a valid zip/ }, "a deflate stream with an invalid block type");
  const error = await extractToMemory(Buffer.from("nope")).catch((e: unknown) => e);
  t.ok(error instanceof AppError, "an AppError, so routes answer 422 with the code");
  await t.rejects(extractToMemory(path.join(dir, "missing.zip")), { code: "ENOENT" }, "file-system errors pass through");
});

t.test("a file of the maximum size reads through the file path too", async (t) => {
  const file = path.join(dir, "limits.zip");
  await writeFile(file, await ours([{ path: "exact.bin", content: Buffer.alloc(1000, 1) }]));
  t.equal((await extractToMemory(file, { maxEntrySize: 1000, maxTotalSize: 1000 }))[0]!.content.length, 1000, "limits are inclusive");
  t.match(await refusal(file, { maxEntrySize: 999 }), { code: "archive_entry_too_large" });
  t.ok((await readFile(file)).length > 0);
});
