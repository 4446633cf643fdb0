import t from "tap";
import { detectGitProvider } from "../../../shared/deploy/configs.ts";
import { deployerFor, testConnection } from "../../../shared/deploy/index.ts";
import { scrubberFor } from "../../../shared/deploy/scrub.ts";
import { ftpDeployer } from "../../../shared/deploy/ftp/ftpDeploy.ts";
import { bitbucketDeployer } from "../../../shared/deploy/git/bitbucket.ts";
import { githubDeployer } from "../../../shared/deploy/git/github.ts";
import { gitlabDeployer } from "../../../shared/deploy/git/gitlab.ts";
import { normalizeFilePath } from "../../../shared/deploy/files.ts";

t.test("the scrubber removes secrets in every form they travel in", async (t) => {
  const config = { username: "bot", password: "s3cret/Pass+word", app_password: "ATBBapp", private_key: "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n-----END OPENSSH PRIVATE KEY-----" };
  const scrub = scrubberFor(config);
  const basic = Buffer.from("bot:s3cret/Pass+word").toString("base64");
  const leaks = [
    "530 Login incorrect for bot with password s3cret/Pass+word",
    `GET https://bot:s3cret%2FPass%2Bword@example.com/x`,
    `authorization: Basic ${basic}`,
    `header {"Authorization":"Basic ${basic}"}`,
    "ftp://anyone:whatever@host/path",
    "Bearer ghp_abcdefghijklmnopqrstuvwxyz012345",
    "PRIVATE-TOKEN: glpat-zzzzzzzzzzzzzzzzzzzz",
    `key was ${config.private_key}`,
    "line AAAAB3NzaC1yc2EAAAADAQABAAABAQ leaked",
  ];
  for (const leak of leaks) {
    const clean = scrub.text(leak);
    t.notMatch(clean, /s3cret|Pass%2B|ghp_abc|glpat-z|whatever|AAAAB3Nza|BEGIN OPENSSH/, leak);
    t.notMatch(clean, basic, leak);
    t.match(clean, /\[redacted\]/, leak);
  }
  t.same(scrub.value({ nested: { password: "anything", note: "pw s3cret/Pass+word" }, list: ["ATBBapp"] }), {
    nested: { password: "[redacted]", note: "pw [redacted]" },
    list: ["[redacted]"],
  });
  t.equal(scrub.text("Uploaded 12 files to /var/www"), "Uploaded 12 files to /var/www", "ordinary text is untouched");
});

t.test("targets pick their deployer; git providers are told by their fields", async (t) => {
  t.equal(deployerFor({ method: "ftp", config: { host: "h", username: "u", password: "p", remote_path: "/" } }), ftpDeployer);
  t.equal(deployerFor({ method: "git", config: { owner: "o", repo: "r", branch: "main", access_token: "x" } }), githubDeployer);
  t.equal(deployerFor({ method: "git", config: { project_id: 3, branch: "main", access_token: "x" } }), gitlabDeployer);
  t.equal(deployerFor({ method: "git", config: { workspace: "w", repo: "r", branch: "main", username: "u", app_password: "p" } }), bitbucketDeployer);
  t.equal(detectGitProvider({ provider: "gitlab", owner: "o" }), "gitlab", "an explicit provider wins");
  t.throws(() => deployerFor({ method: "git", config: {} as never }), { code: "invalid_config" });
  const result = await testConnection({ method: "ssh", config: { host: "10.0.0.1", port: 22, username: "u", auth_method: "password", password: "secret-pass", remote_path: "/srv" } }, { network: { allowPrivate: false } });
  t.match(result, { ok: false, code: "network_target_refused" });
  t.notMatch(result.message, "secret-pass");
  const invalid = await testConnection({ method: "ssh", config: { host: "h", username: "u", auth_method: "key", remote_path: "/srv" } as never }, { network: { allowPrivate: true } });
  t.match(invalid, { ok: false, code: "invalid_config", message: /private_key is required/ });
});

t.test("generated file paths are checked", async (t) => {
  t.equal(normalizeFilePath("./src//a\\b.txt"), "src/a/b.txt");
  for (const bad of ["", "/etc/passwd", "a/../../b", "a/./b", "dir/", "a\nb", "a\0b"]) t.throws(() => normalizeFilePath(bad), { code: "invalid_config" }, JSON.stringify(bad));
});
