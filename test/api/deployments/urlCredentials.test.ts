/**
 * A git config's `gitlab_url` or `api_url` with a user name or password in it is refused:
 * those URLs are stored in the clear and shown to every member who reads the environment,
 * so a password pasted there would be readable by all of them (and would never be sent:
 * fetch refuses URLs with credentials). Nothing is stored, and the answer does not repeat it.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("API base URLs with credentials", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const password = "Url-Pass-7d1f0a";
  const configs = {
    "git_config.gitlab_url": { project_id: 7, branch: "main", access_token: "glpat-Example0123456789", gitlab_url: `https://deployer:${password}@gitlab.example.com` },
    "git_config.api_url": { owner: "acme", repo: "site", branch: "main", access_token: "ghp_Example0123456789", api_url: `https://${password}@ghe.example.com/api/v3` },
  };
  for (const [field, git_config] of Object.entries(configs)) {
    const created = await api.post(`/api/projects/${project}/environments`, { name: "Repo", type: "production", git_config });
    t.equal(created.status, 422, created.text);
    t.match(created.body.errors[field], [/must not hold a user name or password/], field);
    t.notOk(created.text.includes(password), "the answer does not repeat it");
    const tested = await api.post("/api/deployments/test-connection", { git_config });
    t.equal(tested.status, 422, tested.text);
    t.ok(tested.body.errors[field], `test-connection: ${field}`);
  }
  t.same((await api.get(`/api/projects/${project}/environments`)).body.environments, [], "nothing stored");
  const plain = await api.post(`/api/projects/${project}/environments`, {
    name: "Repo",
    type: "production",
    git_config: { ...configs["git_config.gitlab_url"], gitlab_url: "https://gitlab.example.com" },
  });
  t.equal(plain.status, 201, plain.text);
});
