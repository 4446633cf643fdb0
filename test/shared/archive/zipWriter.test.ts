import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import t, { type Test } from "tap";
import { createZipStream, type ZipEntryInput, type ZipStreamOptions } from "../../../shared/archive/zipWriter.ts";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { sourceFiles } from "./support/sourceFiles.ts";
import { unzip, unzipMissing, unzipNames, unzipPiped, unzipSizes } from "./support/unzip.ts";

const dir = await mkdtemp(path.join(tmpdir(), "zip-writer-test-"));
t.teardown(() => rm(dir, { recursive: true, force: true }));
let counter = 0;

/** Writes the archive of `entries` to a temp file and returns its path. */
async function writeZip(entries: Iterable<ZipEntryInput> | AsyncIterable<ZipEntryInput>, options?: ZipStreamOptions): Promise<string> {
  const file = path.join(dir, `archive-${++counter}.zip`);
  await pipeline(createZipStream(entries, options), createWriteStream(file));
  return file;
}

/**
 * unzip -t passes, unzip -l lists exactly the input paths with their sizes, and `unzip -p`
 * gives back the contents one after another: with the sizes, each file byte for byte,
 * without writing thousands of files to disk and reading them back.
 */
async function judge(t: Test, file: string, contents: Map<string, Buffer>): Promise<void> {
  const tested = unzip("-t", file);
  t.equal(tested.status, 0, `unzip -t: ${tested.stdout.split("\n").slice(-2).join(" ")} ${tested.stderr}`);
  t.match(tested.stdout, /No errors detected/);
  t.same(unzipNames(file), [...contents.keys()], "unzip -l lists exactly the input paths, in order");
  t.same(unzipSizes(file), [...contents].map(([name, content]) => [name, content.length]), "with their sizes");
  if (!unzipPiped(file).equals(Buffer.concat([...contents.values()]))) t.fail("the extracted bytes differ");
  t.pass(`${contents.size} files extracted byte for byte`);
}

const text = (s: string) => Buffer.from(s);

t.test("an archive of many kinds of entries passes unzip -t and extracts byte for byte", { skip: unzipMissing }, async (t) => {
  const contents = new Map<string, Buffer>([
    ["README.md", text("# Generated\n\nHello.\n")],
    ["empty.txt", Buffer.alloc(0)],
    ["src/models/ünïcødé 名前.ts", text("export const name = '名前';\n".repeat(50))],
    ["tiny", text("x")],
    ["random.bin", randomBytes(100_000)], // incompressible: stored
    ["big/zeros.bin", Buffer.alloc(3_000_000)], // over the whole-entry limit: streamed deflate
    ["streamed.txt", text("line of a stream\n".repeat(20_000))],
    ["lazy.txt", text("produced when reached")],
    ["u8.txt", text("a Uint8Array")],
  ]);
  const entries: ZipEntryInput[] = [...contents].map(([p, content]) => {
    if (p === "streamed.txt") return { path: p, content: Readable.from([content.subarray(0, 100), content.subarray(100).toString()]) };
    if (p === "lazy.txt") return { path: p, content: async () => content.toString() };
    if (p === "u8.txt") return { path: p, content: new Uint8Array(content) };
    return { path: p, content };
  });
  const file = await writeZip(entries);
  await judge(t, file, contents);
  const listing = unzip("-Zv", file).stdout;
  t.match(listing, /random\.bin[\s\S]*?compression method:\s+none \(stored\)/, "incompressible data is stored");
  t.match(listing, /README\.md[\s\S]*?compression method:\s+deflated/);
  t.match(listing, /streamed\.txt[\s\S]*?extended local header:\s+yes/, "streamed content uses a data descriptor");
  t.match(listing, /README\.md[\s\S]*?extended local header:\s+no/, "in-memory content has sizes up front");
  t.match(listing, /ünïcødé 名前\.ts[\s\S]*?file system or operating system of origin:\s+Unix/);
});

t.test("10,000 generated source files round-trip through unzip", { skip: unzipMissing }, async (t) => {
  const contents = new Map([...sourceFiles(10_000, 7)].map((f) => [f.path, text(f.content)]));
  const file = await writeZip([...contents].map(([p, content]) => ({ path: p, content: content.toString() })));
  await judge(t, file, contents);
  t.ok((await stat(file)).size < [...contents.values()].reduce((a, b) => a + b.length, 0) / 3, "text compresses");
});

t.test("an empty archive is valid", { skip: unzipMissing }, async (t) => {
  const file = await writeZip([]);
  t.equal((await stat(file)).size, 22, "only the end record");
  const listed = unzip("-l", file);
  t.match(listed.stdout + listed.stderr, /empty|0 files/);
  t.same(await extractToMemory(file), []);
});

t.test("forced ZIP64 records pass unzip -t and our reader", { skip: unzipMissing }, async (t) => {
  const contents = new Map([
    ["a.txt", text("hello zip64 ".repeat(100))],
    ["stream.txt", text("streamed under zip64\n".repeat(1000))],
    ["empty", Buffer.alloc(0)],
  ]);
  const file = await writeZip(
    [...contents].map(([p, c]) => ({ path: p, content: p === "stream.txt" ? Readable.from([c]) : c })),
    { zip64: true },
  );
  await judge(t, file, contents);
  const bytes = await readFile(file);
  t.ok(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), "has a ZIP64 end of central directory record");
  t.ok(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x07])), "and its locator");
  t.match(unzip("-Zv", file).stdout, /minimum software version required to extract:\s+4\.5/);
  const back = await extractToMemory(file);
  t.same(back.map((e) => [e.path, e.content.toString()]), [...contents].map(([p, c]) => [p, c.toString()]));
});

t.test("more than 65,535 entries switch to ZIP64 end records on their own", { skip: unzipMissing }, async (t) => {
  const count = 65_600;
  const file = await writeZip(
    (function* () {
      for (let i = 0; i < count; i++) yield { path: `f/${i}`, content: i % 1000 === 0 ? `file ${i}` : "" };
    })(),
  );
  const bytes = await readFile(file);
  t.equal(bytes.readUInt16LE(bytes.length - 22 + 10), 0xffff, "classic end record holds the ZIP64 mark");
  t.ok(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), "ZIP64 end record present");
  const tested = unzip("-tq", file);
  t.equal(tested.status, 0, tested.stdout + tested.stderr);
  t.match(tested.stdout, /No errors detected/);
  const back = await extractToMemory(file, { maxEntries: count });
  t.equal(back.length, count);
  t.equal(back[65_000]!.path, "f/65000");
  t.equal(back[65_000]!.content.toString(), "file 65000");
});

t.test("timestamps and modes survive", { skip: unzipMissing }, async (t) => {
  const when = new Date(2024, 4, 6, 7, 8, 10); // local time
  const file = await writeZip([
    { path: "default.txt", content: "a" },
    { path: "run.sh", content: "#!/bin/sh\n", mode: 0o755, mtime: new Date(2001, 1, 3, 4, 5, 6) },
    { path: "old.txt", content: "b", mtime: new Date(1975, 0, 1) },
  ], { mtime: when });
  const [a, sh, old] = await extractToMemory(file);
  t.equal(a!.mtime.getTime(), when.getTime(), "exact time from the UT field");
  t.equal(a!.mode, 0o644);
  t.equal(sh!.mode, 0o755);
  t.equal(sh!.mtime.getTime(), new Date(2001, 1, 3, 4, 5, 6).getTime());
  t.equal(old!.mtime.getTime(), new Date(1975, 0, 1).getTime(), "UT keeps a pre-1980 time exactly");
  const details = unzip("-Zv", file).stdout;
  t.match(details, /default\.txt[\s\S]*?\(DOS date\/time\):\s+2024 May 6 07:08:10/, "DOS fields in local time");
  t.match(details, /old\.txt[\s\S]*?\(DOS date\/time\):\s+1980 Jan 1 00:00:00/, "DOS fields clamp to 1980");
  t.match(unzip("-l", file).stdout, /1975-01-01 00:00\s+old\.txt/, "unzip shows the exact UT time");
  const out = path.join(dir, "modes");
  unzip("-q", file, "-d", out);
  t.equal((await stat(path.join(out, "run.sh"))).mode & 0o777, 0o755, "unzip restores the mode");
});

t.test("unsafe and duplicate paths fail the stream with a coded error", async (t) => {
  const cases: [string, string][] = [
    ["../escape.txt", "archive_unsafe_path"],
    ["/abs.txt", "archive_unsafe_path"],
    ["C:/x.txt", "archive_unsafe_path"],
    ["a\\b.txt", "archive_unsafe_path"],
    ["nul\u0000.txt", "archive_unsafe_path"],
    ["ok.txt", "archive_duplicate_path"],
  ];
  for (const [bad, code] of cases) {
    const source = Readable.from(["never read"]);
    const stream = createZipStream([
      { path: "ok.txt", content: "fine" },
      { path: bad, content: source },
    ]);
    await t.rejects(pipeline(stream, createWriteStream(path.join(dir, "refused.zip"))), { code, status: 422 }, JSON.stringify(bad));
    t.ok(source.destroyed, "the refused entry's stream is released");
  }
  await t.rejects(writeZip([{ path: "x", content: 42 as unknown as string }]), TypeError, "content of the wrong type");
  t.throws(() => createZipStream([], { level: 12 }), RangeError, "a bad level throws at once");
  t.throws(() => createZipStream([], { readAhead: -1 }), RangeError, "so does a bad readAhead");
});

t.test("a portable archive (generated code) also refuses .git, Windows names and case clashes", async (t) => {
  const cases: [string, string, RegExp][] = [
    [".git/hooks/post-checkout", "archive_unsafe_path", /git folder/],
    ["src/Git~1/config", "archive_unsafe_path", /git folder/],
    ["src/con.ts", "archive_unsafe_path", /Windows device name/],
    ["src/a:b.txt", "archive_unsafe_path", /Windows cannot store/],
    ["src/OK.txt", "archive_duplicate_path", /`src\/ok\.txt` and `src\/OK\.txt` differ only in case/],
    ["SRC/other.txt", "archive_duplicate_path", /`src\/ok\.txt` and `SRC\/other\.txt` clash/],
  ];
  for (const [bad, code, message] of cases) {
    const entries = [{ path: "src/ok.txt", content: "fine" }, { path: bad, content: "x" }];
    await t.rejects(writeZip(entries, { portable: true }), { code, status: 422, message }, JSON.stringify(bad));
    await t.resolves(writeZip(entries), `${JSON.stringify(bad)} is accepted where portability is not asked for`);
  }
});

t.test("an error in a content stream fails the archive", async (t) => {
  const failing = new Readable({
    read() {
      this.destroy(new Error("disk on fire"));
    },
  });
  await t.rejects(writeZip([{ path: "a", content: "ok" }, { path: "b", content: failing }]), /disk on fire/);
  await t.rejects(writeZip([{ path: "a", content: () => Promise.reject(new Error("storage down")) }]), /storage down/);
});

t.test("level 0 stores everything", { skip: unzipMissing }, async (t) => {
  const contents = new Map([["a.txt", text("aaaa".repeat(1000))], ["s.txt", text("streamed".repeat(1000))]]);
  const file = await writeZip([...contents].map(([p, c]) => ({ path: p, content: p === "s.txt" ? Readable.from([c]) : c })), { level: 0 });
  await judge(t, file, contents);
  t.ok((await stat(file)).size > 12_000);
});
