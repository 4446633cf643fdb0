/**
 * A first-seen SSH host key is pinned to the environment only while the environment still
 * points at the server that presented it. A deployment that started against one server, while
 * a manager moved the environment to another, must not pin the old server's key onto the new
 * configuration: every deployment to the new server would then fail with `host_key_mismatch`.
 * A proxy in front of the first server holds its answers until the environment was moved.
 */
import net from "node:net";
import t, { type Test } from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startSshPeer } from "../../support/peers/sshPeer.ts";

/** Forwards to `port`, holding what the server sends until `release()`; `connected` resolves on the first connection. */
async function holdingTcpProxy(t: Test, port: number) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let connected: () => void = () => {};
  const firstConnection = new Promise<void>((resolve) => (connected = resolve));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(port, "127.0.0.1");
    sockets.add(downstream).add(upstream);
    downstream.pipe(upstream);
    void released.then(() => upstream.pipe(downstream));
    const close = () => {
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    connected();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as net.AddressInfo).port, firstConnection, release };
}

t.test("a deployment to the old server does not pin its key onto the moved environment", async (t) => {
  const oldServer = await startSshPeer();
  const newServer = await startSshPeer({ username: oldServer.username, password: oldServer.password });
  t.teardown(() => Promise.all([oldServer.close(), newServer.close()]));
  const proxy = await holdingTcpProxy(t, oldServer.port);
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id, { "index.html": "<p>hi</p>\n" });
  const config = (port: number) => ({ host: "127.0.0.1", port, username: oldServer.username, auth_method: "password", password: oldServer.password, remote_path: "site" });
  const env = await buildEnvironment(app.url, token, project, { ssh_config: config(proxy.port) });

  const first = await startDeployment(app.url, token, { environment_id: env, code_generation_id: generation });
  await proxy.firstConnection;
  const moved = await api.put(`/api/environments/${env}`, { ssh_config: config(newServer.port) });
  t.equal(moved.status, 200, moved.text);
  t.equal(moved.body.environment.ssh_config.host_key_fingerprint, null, "a new server: no pin yet");
  proxy.release();
  const done = await waitForDeployment(app.url, token, first, 60_000);
  t.equal(done.status, "succeeded", done.error);

  const shown = (await api.get(`/api/projects/${project}/environments`)).body.environments[0].ssh_config;
  t.not(shown.host_key_fingerprint, oldServer.hostKeyFingerprint, "the old server's key is not pinned to the new configuration");
  const second = await waitForDeployment(app.url, token, await startDeployment(app.url, token, { environment_id: env, code_generation_id: generation }), 60_000);
  t.equal(second.status, "succeeded", `the new server is reached: ${second.error}`);
  const pinned = (await api.get(`/api/projects/${project}/environments`)).body.environments[0].ssh_config;
  t.equal(pinned.host_key_fingerprint, newServer.hostKeyFingerprint, "and its own key is pinned");
});
