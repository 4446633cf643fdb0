import { randomBytes } from "node:crypto";
import t from "tap";
import { z } from "zod";
import type pg from "pg";
import { copyOutRows, defaultHighWaterBytes } from "../../shared/db/copyOut.ts";
import { ignoredRow, sql } from "../../shared/db/pool.ts";
import type { DeployFile } from "../../shared/deploy/types.ts";
import { generationFiles, generationFilesCopied } from "../../shared/generations/files.ts";
import { buildProject, buildUser } from "../support/factories.ts";
import { freshDatabase } from "../support/db.ts";

t.test("a binary COPY yields every row's fields as their bytes, in order", async (t) => {
  const db = await freshDatabase(t);
  await db.pool.query(sql.type(ignoredRow)`create table blobs (n int primary key, label text, data bytea)`);
  const rows = [
    { n: 1, label: "empty", data: Buffer.alloc(0) },
    { n: 2, label: "not UTF-8", data: Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3]) },
    { n: 3, label: "ünïcødé 名前", data: randomBytes(70_000) },
    { n: 4, label: null, data: null },
    { n: 5, label: "large", data: randomBytes(3 * 1024 * 1024) },
  ];
  for (const row of rows) {
    await db.pool.query(sql.type(ignoredRow)`insert into blobs values (${row.n}, ${row.label}, ${row.data === null ? null : sql.binary(row.data)})`);
  }
  const got: (Buffer | null)[][] = [];
  for await (const row of copyOutRows(db.pgPool, "copy (select n, label, data from blobs order by n) to stdout (format binary)")) got.push(row);
  t.equal(got.length, rows.length);
  for (const [i, row] of rows.entries()) {
    t.equal(got[i]![0]!.readInt32BE(0), row.n, `row ${row.n} in order`);
    t.equal(got[i]![1]?.toString("utf8") ?? null, row.label, "text as its UTF-8 bytes, NULL as null");
    t.ok(row.data === null ? got[i]![2] === null : got[i]![2]!.equals(row.data), `bytea ${row.label} byte for byte`);
  }
  t.equal(db.pgPool.totalCount, db.pgPool.idleCount, "the connection went back to the pool");
});

t.test("a slow consumer holds the server back, and one that stops early frees the connection", async (t) => {
  const db = await freshDatabase(t);
  await db.pool.query(sql.type(ignoredRow)`create table blobs (n int primary key, data bytea)`);
  await db.pool.query(sql.type(ignoredRow)`insert into blobs select n, decode(repeat('ab', 16384), 'hex') from generate_series(1, 400) n`);
  const text = "copy (select n, data from blobs order by n) to stdout (format binary)";
  let taken = 0;
  for await (const row of copyOutRows(db.pgPool, text, { highWaterBytes: 64 * 1024 })) {
    t.equal(row[1]!.length, 16384);
    taken += 1;
    if (taken === 50) break;
  }
  t.equal(db.pgPool.totalCount, 0, "a COPY read in part ends its connection instead of pooling it");
  let all = 0;
  for await (const row of copyOutRows(db.pgPool, text, { highWaterBytes: 64 * 1024 })) {
    all += row[1]!.length;
    if (all % (1024 * 1024) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.equal(all, 400 * 16384, "every row arrives when the consumer is slow");
  const count = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from blobs`);
  t.equal(count, 400, "the database is still usable");
});

t.test("a stalled consumer leaves the backlog with the server: about the high-water mark of rows is read", async (t) => {
  const db = await freshDatabase(t);
  await db.pool.query(sql.type(ignoredRow)`create table blobs (n int primary key, data bytea)`);
  // 8 MiB of rows, far past the mark and the kernel's socket buffers.
  await db.pool.query(sql.type(ignoredRow)`insert into blobs select n, decode(repeat('ab', 16384), 'hex') from generate_series(1, 512) n`);
  const text = "copy (select n, data from blobs order by n) to stdout (format binary)";
  const readBytes = async (highWaterBytes?: number) => {
    let socket: { bytesRead: number } | null = null;
    const onAcquire = (client: pg.PoolClient) => (socket = (client as unknown as { connection: { stream: { bytesRead: number } } }).connection.stream);
    db.pgPool.once("acquire", onAcquire);
    const rows = copyOutRows(db.pgPool, text, highWaterBytes === undefined ? {} : { highWaterBytes });
    await rows.next();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the consumer stalls
    const read = (socket as { bytesRead: number } | null)?.bytesRead ?? NaN;
    await rows.return(undefined);
    return read;
  };
  const byDefault = await readBytes();
  t.ok(byDefault < 2 * defaultHighWaterBytes, `read ${byDefault} bytes with the default mark (${defaultHighWaterBytes})`);
  const wider = await readBytes(2 * 1024 * 1024);
  t.ok(wider > 2 * 1024 * 1024, `read ${wider} bytes with a 2 MiB mark: the bound is the mark's, not the socket's`);
});

t.test("an error in the COPY rejects the read", async (t) => {
  const db = await freshDatabase(t);
  const rows = copyOutRows(db.pgPool, "copy (select 1 / 0) to stdout (format binary)");
  await t.rejects(rows.next(), /division by zero/);
});

t.test("a generation's files read by COPY match the paged reads, path order and bytes", async (t) => {
  const db = await freshDatabase(t);
  const owner = await buildUser(db.pool);
  const project = await buildProject(db.pool, owner.id);
  const generation = await db.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into code_generations (project_id, user_id) values (${project}, ${owner.id}) returning id`);
  const paths = ["b.txt", "a/z.ts", "B.txt", "a.txt", "ä.txt", "a/a/a.ts"];
  for (const [i, path] of paths.entries()) {
    const content = i === 0 ? randomBytes(300_000) : Buffer.from(`file ${i}\n`.repeat(i * 50));
    await db.pool.query(sql.type(ignoredRow)`
      insert into code_generation_files (code_generation_id, path, content, size) values (${generation}, ${path}, ${sql.binary(content)}, ${content.length})`);
  }
  const paged: DeployFile[] = [];
  for await (const file of generationFiles(db.pool, generation)) paged.push(file);
  const copied: DeployFile[] = [];
  for await (const file of generationFilesCopied(db.pgPool, generation)) copied.push(file);
  t.same(copied.map((f) => f.path), paged.map((f) => f.path), "the same paths in the same order");
  t.ok(copied.every((f, i) => f.content.equals(paged[i]!.content)), "the same bytes");
  await t.rejects(generationFilesCopied(db.pgPool, 1.5).next(), RangeError);
});
