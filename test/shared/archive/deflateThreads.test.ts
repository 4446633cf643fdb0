import { randomBytes } from "node:crypto";
import zlib from "node:zlib";
import t, { type Test } from "tap";
import { batchBytes, DeflateBatcher, warmDeflateThreads } from "../../../shared/archive/deflateThreads.ts";
import { sourceFiles } from "./support/sourceFiles.ts";

/** Inputs of every kind a batch meets: small text, exactly a batch, larger than one, random bytes. */
function inputs(): Buffer[] {
  const text = [...sourceFiles(300, 3)].map((f) => Buffer.from(f.content));
  return [...text.slice(0, 100), Buffer.alloc(batchBytes, 7), ...text.slice(100, 200), randomBytes(200_000), Buffer.from("x"), ...text.slice(200)];
}

/** Each result is a complete raw deflate stream of its own input. */
async function check(t: Test, batcher: DeflateBatcher, data: Buffer[]): Promise<void> {
  const tickets = data.map((d) => batcher.add(d));
  const results = await Promise.all(tickets.map((ticket) => batcher.result(ticket)));
  const bad = results.findIndex((r, i) => !zlib.inflateRawSync(r).equals(data[i]!));
  t.equal(bad, -1, `${data.length} entries inflate back to their inputs, in order`);
}

t.test("entries deflated before the threads have started, and on them", async (t) => {
  const batcher = new DeflateBatcher(6);
  await check(t, batcher, inputs()); // the process's first batches: deflated here while a thread starts
  await warmDeflateThreads();
  await check(t, batcher, inputs());
  await check(t, new DeflateBatcher(1), inputs());
});

t.test("a result asked for sends its batch at once, and the input may be reused", async (t) => {
  await warmDeflateThreads();
  const batcher = new DeflateBatcher(6);
  const data = Buffer.from("a short entry, alone in its batch ".repeat(10));
  const ticket = batcher.add(data);
  const expected = Buffer.from(data);
  data.fill(0); // copied when added
  t.ok(zlib.inflateRawSync(await batcher.result(ticket)).equals(expected));
});
