/**
 * A host name that the network guard refuses because of what it resolves to is refused
 * without telling the caller that address: the inline connection test, an environment, a
 * webhook, and the connection test of a stored environment whose name resolves privately
 * only now. The name used is this machine's own host name, which its hosts file resolves to a
 * loopback or private address (as container and CI hosts files do).
 */
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import t, { type Test } from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { classifyAddress } from "../../../shared/net/addressClass.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const name = hostname().toLowerCase();
const addresses = await lookup(name, { all: true }).then((found) => found.map((a) => a.address), () => [] as string[]);
const notPrivate =
  addresses.length === 0 || addresses.some((address) => classifyAddress(address) === null)
    ? `this machine's host name ${name} does not resolve to loopback or private addresses only (${addresses.join(", ") || "not at all"})`
    : false;

t.test("a refused name does not reveal what it resolves to", { skip: notPrivate }, async (t) => {
  const app = await startTestApp(t, { env: { ALLOW_PRIVATE_NETWORK_TARGETS: "false" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const ftp = (host: string) => ({ host, port: 21, username: "deployer", password: "Ftp-Secret-0123456", remote_path: "/www" });
  const clear = (t: Test, text: string, what: string) => {
    t.match(text, new RegExp(`${name.replace(/\./g, "\\.")}: it resolves to an? [a-z -]+ address`), `${what} names the host and the kind of address`);
    for (const address of addresses) t.notOk(text.includes(address), `${what} does not say ${address}`);
  };

  const tested = await api.post("/api/deployments/test-connection", { ftp_config: ftp(name) });
  t.equal(tested.status, 422, tested.text);
  t.equal(tested.body.code, "validation_failed");
  clear(t, tested.text, "the inline connection test");

  const env = await api.post(`/api/projects/${project}/environments`, { name: "Live", type: "production", ftp_config: ftp(name) });
  t.equal(env.status, 422, env.text);
  clear(t, env.text, "an environment");

  const hook = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: `http://${name}:8080/hook`, secret_key: "hook-secret-0123456789" });
  t.equal(hook.status, 422, hook.text);
  clear(t, hook.text, "a webhook");

  // A stored environment whose name resolves privately only now: refused when it connects.
  const stored = await api.post(`/api/projects/${project}/environments`, { name: "Later", type: "staging", ftp_config: ftp("not-yet-in-dns.invalid") });
  t.equal(stored.status, 201, stored.text);
  await app.pool.query(sql.type(z.object({}))`
    update environments set ftp_config = jsonb_set(ftp_config, '{host}', to_jsonb(${name}::text)) where id = ${stored.body.environment.id}`);
  const later = await api.post("/api/deployments/test-connection", { environment_id: stored.body.environment.id });
  t.equal(later.status, 200, later.text);
  t.match(later.body, { ok: false, code: "network_target_refused" });
  clear(t, later.body.message, "a stored environment's connection test");
});
