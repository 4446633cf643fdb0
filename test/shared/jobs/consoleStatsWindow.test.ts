/**
 * The console's figures (`jobStats`) on the edges of its hour, after their queries moved to
 * index-only scans (sql/migrations/0082): the last hour's finished jobs
 * by five minutes, its slowest jobs in order with their durations, queue depth per kind and
 * the latest failures; older and unfinished jobs stay out of the hour's figures.
 */
import t from "tap";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { jobStats } from "../../../shared/jobs/console.ts";
import { freshDatabase } from "../../support/db.ts";

t.test("jobStats", async (t) => {
  const db = await freshDatabase(t);
  // Finished `ago` minutes before now after running `took` seconds.
  const finished = async (kind: string, status: "succeeded" | "failed", ago: number, took: number) => {
    await db.pool.query(sql.type(ignoredRow)`
      insert into jobs (kind, status, max_attempts, attempts, started_at, finished_at)
      values (${kind}, ${status}, 1, 1, now() - make_interval(mins => ${ago}, secs => ${took}), now() - make_interval(mins => ${ago}))`);
  };
  await finished("mail__send", "succeeded", 1, 2);
  await finished("mail__send", "succeeded", 2, 40);
  await finished("mail__send", "failed", 3, 7);
  await finished("archives__build", "succeeded", 31, 90);
  await finished("archives__build", "succeeded", 52, 1);
  await finished("archives__build", "succeeded", 70, 500); // before the hour: in no figure of it
  await db.pool.query(sql.type(ignoredRow)`
    insert into jobs (kind, status, max_attempts, started_at) values
      ('mail__send', 'queued', 1, null), ('mail__send', 'queued', 1, null), ('archives__build', 'running', 1, now())`);

  const stats = await jobStats(db.pool, 15_000);

  t.equal(stats.throughput.length, 12, "twelve five-minute buckets");
  const times = stats.throughput.map((b) => b.at.getTime());
  t.same(times, [...times].sort((a, b) => a - b), "oldest first");
  t.ok(times.every((at, i) => i === 0 || at - times[i - 1]! === 300_000), "five minutes apart");
  t.ok(Date.now() - times[11]! < 300_000 && Date.now() >= times[11]!, "the last bucket holds now");
  const total = (key: "succeeded" | "failed") => stats.throughput.reduce((n, b) => n + b[key], 0);
  t.equal(total("failed"), 1);
  // The 52-minute-old job falls before the first bucket when now is late in its five minutes.
  const firstBucketStart = times[0]!;
  const expectedSucceeded = 3 + (Date.now() - 52 * 60_000 >= firstBucketStart ? 1 : 0);
  t.equal(total("succeeded"), expectedSucceeded, "finished jobs of the buckets' hour, none older");
  const bucketOf = (minutesAgo: number) => stats.throughput.findIndex((b) => {
    const at = Date.now() - minutesAgo * 60_000;
    return at >= b.at.getTime() && at < b.at.getTime() + 300_000;
  });
  t.equal(stats.throughput[bucketOf(31)]!.succeeded >= 1, true, "a job lands in the bucket of its finish time");

  t.same(
    stats.slowest.map((j) => [j.kind, Math.round(j.duration_ms / 1000)]),
    [["archives__build", 90], ["mail__send", 40], ["mail__send", 7], ["mail__send", 2], ["archives__build", 1]],
    "the hour's jobs, longest first, with their durations",
  );
  t.same(stats.kinds, [
    { kind: "archives__build", queued: 0, running: 1 },
    { kind: "mail__send", queued: 2, running: 0 },
  ]);
  t.match(stats.totals, { queued: 2, running: 1, failed_last_hour: 1 });
  t.same(stats.failed.map((j) => j.kind), ["mail__send"]);
});
