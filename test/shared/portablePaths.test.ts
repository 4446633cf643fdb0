/**
 * The portability rules of output paths (shared/portablePaths.ts): git folder spellings,
 * Windows device names and characters, trailing dots and spaces, and case clashes.
 */
import t from "tap";
import { CaseFolds, caseClash, portablePathProblem } from "../../shared/portablePaths.ts";

t.test("portablePathProblem refuses what would become a repository's .git or a file Windows cannot hold", async (t) => {
  const refused: [string, RegExp][] = [
    [".git/hooks/post-checkout", /git folder/],
    ["src/.GIT/config", /git folder/],
    [".git", /git folder/],
    [".Git/x", /git folder/],
    ["GIT~1/config", /git folder/],
    ["a/git~1", /git folder/],
    [".g\u200cit/hooks/x", /git folder/],
    [".gi\ufefft/config", /git folder/],
    [".git./x", /ends in a dot/],
    [".git /x", /ends in a dot or a space/],
    ["a/b.", /ends in a dot/],
    ["a /b", /ends in a dot or a space/],
    ["CON", /device name/],
    ["src/nul.txt", /device name/],
    ["Aux.tar.gz", /device name/],
    ["com1.ts", /device name/],
    ["LPT9/x", /device name/],
    ["com\u00b9.txt", /device name/],
    ["nul .txt", /device name/],
    ["a<b.ts", /holds `<`/],
    ["a/b>c", /holds `>`/],
    ["x:y.ts", /holds `:`/],
    ["say\"hi\".md", /holds `"`/],
    ["a|b", /holds `\|`/],
    ["what?.md", /holds `\?`/],
    ["glob/*.ts", /holds `\*`/],
    ["é/x?.ts", /holds `\?`/],
  ];
  for (const [path, message] of refused) t.match(portablePathProblem(path), message, JSON.stringify(path));
});

t.test("portablePathProblem accepts names that only look close", async (t) => {
  const fine = [
    ".gitignore",
    ".github/workflows/ci.yml",
    ".gitkeep",
    "git/x",
    "x.git",
    "a/.gitmodules",
    "git~2",
    "console.ts",
    "con-fig.ts",
    "nullable.ts",
    "com10.ts",
    "lpt0",
    "com.ts",
    "app.ts",
    "Aux2/x",
    "src/components/Post.tsx",
    "routes/$id.tsx",
    "app/(group)/page.tsx",
    "dir with space/é.md",
    "..hidden",
    "a..b/c...d",
    "~backup/x",
  ];
  for (const path of fine) t.equal(portablePathProblem(path), null, path);
});

t.test("CaseFolds finds paths that differ only in case, in file names and folders", async (t) => {
  const clash = (...paths: string[]) => {
    const folds = new CaseFolds();
    for (const path of paths) {
      const earlier = folds.add(path);
      if (earlier !== null) return caseClash(path, earlier);
    }
    return null;
  };
  t.equal(clash("User.ts", "user.ts"), "`User.ts` and `user.ts` differ only in case: on macOS and Windows they are one file");
  t.match(clash("Models/a.ts", "models/b.ts"), /`Models\/a\.ts` and `models\/b\.ts` clash on macOS and Windows/);
  t.match(clash("src/Models/a.ts", "src/x.ts", "src/models/b/c.ts"), /`src\/Models\/a\.ts` and `src\/models\/b\/c\.ts`/);
  t.match(clash("a", "a/b.ts"), /`a` is both a file and a folder \(`a\/b\.ts`\)/, "a file and a folder of the same name");
  t.match(clash("x/b/c.ts", "x/b"), /`x\/b` is both a file and a folder \(`x\/b\/c\.ts`\)/, "a folder, then a file of its name");
  t.match(clash("A/b.ts", "a"), /`A\/b\.ts` and `a` clash/, "a folder, then a file of its name in another case");
  t.match(clash("É.md", "é.md"), /differ only in case/);
  t.equal(clash("Models/a.ts", "Models/b.ts", "Models/sub/c.ts", "models.ts", "a/b", "ab/b"), null, "same folders in the same case are fine");
});
