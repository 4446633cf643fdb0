import { pino } from "pino";
import t from "tap";
import { LogBatch } from "../../shared/logBatch.ts";

/** A sink that remembers each write it was handed. */
function recordingSink() {
  const writes: string[] = [];
  return { writes, write: (text: string) => writes.push(text) };
}

t.test("LogBatch holds lines until the batch size, then hands them over in order as one write", async (t) => {
  const sink = recordingSink();
  const batch = new LogBatch(sink, 10);
  batch.write("aaaa\n");
  batch.write("bbb\n");
  t.same(sink.writes, [], "9 characters: still held");
  batch.write("c\n");
  t.same(sink.writes, ["aaaa\nbbb\nc\n"], "the line that reaches the size sends the whole batch");
  batch.write("d\n");
  t.same(sink.writes, ["aaaa\nbbb\nc\n"], "a new batch starts empty");
  batch.flush();
  t.same(sink.writes, ["aaaa\nbbb\nc\n", "d\n"], "flush hands over what is held");
  batch.flush();
  t.equal(sink.writes.length, 2, "flushing an empty batch writes nothing");
});

t.test("pino lines through a LogBatch arrive unchanged, whole lines, in order", async (t) => {
  const sink = recordingSink();
  const batch = new LogBatch(sink, 1024);
  const log = pino({ base: { pid: 1 }, timestamp: false }, batch);
  for (let i = 0; i < 40; i += 1) log.info({ req_id: `r${i}`, status: 200 }, "request");
  batch.flush();
  t.ok(sink.writes.length > 1, "more than one batch");
  t.ok(
    sink.writes.every((text) => text.endsWith("\n")),
    "every batch ends at a line end",
  );
  const lines = sink.writes.join("").split("\n").slice(0, -1);
  t.equal(lines.length, 40);
  t.same(JSON.parse(lines[7]!), { level: 30, pid: 1, req_id: "r7", status: 200, msg: "request" });
  t.same(
    lines.map((line) => (JSON.parse(line) as { req_id: string }).req_id),
    Array.from({ length: 40 }, (_, i) => `r${i}`),
  );
});

t.test("take returns the lines held as one string and forgets them", async (t) => {
  const sink = recordingSink();
  const batch = new LogBatch(sink, 100);
  t.equal(batch.take(), "", "nothing held");
  batch.write("a\n");
  batch.write("b\n");
  t.equal(batch.take(), "a\nb\n");
  t.equal(batch.take(), "", "forgotten");
  batch.flush();
  t.same(sink.writes, [], "and not written by the batch");
});
