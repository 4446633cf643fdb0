/**
 * Paths a deployment may not write, through HTTP with a worker and a real FTP server: a
 * generation recorded with a `.git` hook or with paths that differ only in case (as one
 * recorded before the rule would be) fails with the path named and leaves the site untouched;
 * the upload form refuses such file names (FTP files, the SSH zip's entries) with a 422 before
 * anything runs.
 */
import path from "node:path";
import t from "tap";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { startTestApp } from "../../support/app.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { readTree } from "../../support/peers/tree.ts";

t.test("deployments refuse paths that are not portable", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const ftp = await startFtpPeer();
  t.teardown(() => ftp.close());
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const ftpConfig = { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, remote_path: "/site", passive_mode: true };
  const envId = await buildEnvironment(app.url, token, project, { ftp_config: ftpConfig });
  const siteTree = async () => readTree(path.join(ftp.root, "site")).catch(() => new Map<string, Buffer>());

  t.test("an FTP deployment of a generation with a .git hook or a case clash fails naming the path", async (t) => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ "index.php": "<?php", ".git/hooks/post-checkout": "#!/bin/sh\necho owned" }, /\.git\/hooks\/post-checkout.*git folder/],
      [{ "index.php": "<?php", "src/GIT~1/config": "[core]" }, /GIT~1.*git folder/],
      [{ "src/nul.php": "<?php" }, /nul\.php.*Windows device name/],
      [{ "src/User.php": "<?php", "src/user.php": "<?php" }, /`src\/User\.php` and `src\/user\.php` differ only in case/],
    ];
    for (const [files, message] of cases) {
      const generation = await buildGeneration(app.pool, project, user.id, files);
      const created = await api.post("/api/deployments", { environment_id: envId, code_generation_id: generation });
      t.equal(created.status, 201, created.text);
      const executed = await api.post(`/api/deployments/${created.body.deployment.id}/execute`);
      t.equal(executed.status, 202, executed.text);
      const done = await waitForDeployment(app.url, token, created.body.deployment.id);
      t.equal(done.status, "failed", JSON.stringify(done));
      t.equal(done.error_code, "invalid_config");
      t.match(done.error, message);
    }
    t.same([...(await siteTree()).keys()], [], "nothing was written to the site");
  });

  t.test("the upload form refuses such file names with a 422", async (t) => {
    const upload = async (names: string[]) => {
      const form = new FormData();
      const fields = { deployment_method: "ftp", ftp_host: ftp.host, ftp_port: String(ftp.port), ftp_username: ftp.username, ftp_password: ftp.password, ftp_path: "/upload" };
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      names.forEach((name, i) => form.append(`files[${i}]`, new Blob([Buffer.from("x")]), name));
      return request(app.url, "POST", "/api/deployments/upload", { token, body: form, raw: true });
    };
    const refused: [string[], RegExp][] = [
      [["index.php", "AUX.php"], /Windows device name/],
      [["index.php", "what?.php"], /Windows cannot store/],
      [["Index.php", "index.php"], /differ only in case/],
    ];
    for (const [names, message] of refused) {
      const res = await upload(names);
      t.equal(res.status, 422, `${names.join(", ")}: ${res.text}`);
      t.match(res.body.errors.files[0], message);
    }
    const fine = await upload(["index.php", "index.html"]);
    t.equal(fine.status, 200, fine.text);
    t.match(fine.body.upload, { status: "succeeded" });

    // The SSH form's zip: its files are deployed as they are.
    const sshFields = { deployment_method: "ssh", ssh_host: "127.0.0.1", ssh_port: "22", ssh_username: "deployer", ssh_auth_method: "password", ssh_password: "Ssh-Secret-0123456", ssh_path: "site" };
    const zips: [string[], RegExp][] = [
      [["index.php", ".git/hooks/post-checkout"], /git folder/],
      [["index.php", "src/Con.php"], /Windows device name/],
      [["src/A.php", "SRC/b.php"], /clash on macOS and Windows/],
    ];
    for (const [names, message] of zips) {
      const chunks: Buffer[] = [];
      for await (const chunk of createZipStream(names.map((name) => ({ path: name, content: "x" })))) chunks.push(chunk as Buffer);
      const form = new FormData();
      for (const [name, value] of Object.entries(sshFields)) form.append(name, value);
      form.append("archive", new Blob([Buffer.concat(chunks)]), "site.zip");
      const res = await request(app.url, "POST", "/api/deployments/upload", { token, body: form, raw: true });
      t.equal(res.status, 422, `${names.join(", ")}: ${res.text}`);
      t.match(res.body.errors.archive[0], message);
    }
  });
});
