import t from "tap";
import { toDosDateTime } from "../../../shared/archive/dosTime.ts";
import { EntryPathSet, normaliseEntryPath } from "../../../shared/archive/entryPath.ts";
import { ArchiveError } from "../../../shared/archive/errors.ts";

t.test("safe paths are normalised", async (t) => {
  const cases: [string, string][] = [
    ["a.txt", "a.txt"],
    ["src/models/User.ts", "src/models/User.ts"],
    ["./src//models/./User.ts", "src/models/User.ts"],
    ["dir/ünïcødé 名前.ts", "dir/ünïcødé 名前.ts"],
    ["cafe\u0301.txt", "café.txt"], // NFD (as macOS writes it) becomes NFC
    ["...", "..."],
    ["a..b/c", "a..b/c"],
    ["a/.", "a"],
  ];
  for (const [input, expected] of cases) t.equal(normaliseEntryPath(input), expected, JSON.stringify(input));
});

t.test("unsafe paths are refused with archive_unsafe_path and a reason", async (t) => {
  const cases: [string, RegExp][] = [
    ["", /empty/],
    ["../etc/passwd", /'\.\.' segment/],
    ["a/../../b", /'\.\.' segment/],
    ["a/..", /'\.\.' segment/],
    ["/etc/passwd", /absolute/],
    ["C:/Windows/win.ini", /drive letter/],
    ["c:evil", /drive letter/],
    ["a\\..\\b", /backslash/],
    ["a\u0000.txt", /control character/],
    ["a\nb", /control character/],
    ["a\u0085b", /control character/],
    ["bad\ufffd", /UTF-8/],
    ["dir/", /directory/],
    [".", /no file name/],
    ["./", /directory/],
    [`${"a/".repeat(2100)}x`, /longer than 4096 bytes/],
  ];
  for (const [input, reason] of cases) {
    t.throws(() => normaliseEntryPath(input), { name: "ArchiveError", code: "archive_unsafe_path", message: reason, status: 422 }, JSON.stringify(input.slice(0, 20)));
  }
  t.throws(() => normaliseEntryPath(42 as unknown as string), { code: "archive_unsafe_path" }, "not a string");
});

t.test("EntryPathSet refuses a second spelling of the same path", async (t) => {
  const set = new EntryPathSet();
  t.equal(set.add("src/a.ts"), "src/a.ts");
  t.equal(set.add("src/A.ts"), "src/A.ts", "case differs: a different path");
  const error = (() => {
    try {
      set.add("./src//a.ts");
    } catch (e) {
      return e;
    }
  })();
  t.ok(error instanceof ArchiveError);
  t.equal((error as ArchiveError).code, "archive_duplicate_path");
  t.equal((error as ArchiveError).entry, "./src//a.ts");
  t.equal(set.size, 2);
});

t.test("DOS timestamps: fields, two-second resolution, clamped range", async (t) => {
  const when = new Date(2024, 4, 6, 7, 8, 11); // local time, odd second
  const { date, time } = toDosDateTime(when);
  t.equal(date >> 9, 2024 - 1980);
  t.equal((date >> 5) & 15, 5);
  t.equal(date & 31, 6);
  t.equal(time >> 11, 7);
  t.equal((time >> 5) & 63, 8);
  t.equal((time & 31) * 2, 10, "seconds round down to even");
  t.same(toDosDateTime(new Date(1970, 0, 1)), { date: (1 << 5) | 1, time: 0 }, "before 1980: 1980-01-01");
  t.equal(toDosDateTime(new Date(2200, 0, 1)).date >> 9, 127, "after 2107: 2107");
  t.same(toDosDateTime(new Date(NaN)), { date: (1 << 5) | 1, time: 0 }, "invalid date");
});
