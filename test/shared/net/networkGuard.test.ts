import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { createGuardedFetch } from "../../../shared/net/guardedFetch.ts";
import { createGuardedLookup } from "../../../shared/net/guardedLookup.ts";
import { assertPublicHost, HostLookupError, NetworkTargetError, resolvePublicAddress, type Resolver } from "../../../shared/net/networkGuard.ts";
import { PUBLIC_ADDRESS as PUBLIC, rebindingResolver, tableResolver } from "../../support/peers/resolvers.ts";

/** A loopback HTTP server that counts the requests it receives. */
async function countingServer(t: Test) {
  let requests = 0;
  let connections = 0;
  const server = http.createServer((_req, res) => {
    requests += 1;
    res.end("reached");
  });
  server.on("connection", () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, requests: () => requests, connections: () => connections };
}

t.test("assertPublicHost refuses every blocked class in every host notation", async (t) => {
  const policy = { allowPrivate: false };
  const refused = [
    "127.0.0.1",
    "http://127.0.0.1:8080/hook",
    "localhost",
    "api.localhost",
    "http://localhost/",
    "10.0.0.5:21",
    "172.20.1.1",
    "https://192.168.0.10/x",
    "[::1]:22",
    "::1",
    "http://[::ffff:127.0.0.1]/",
    "::ffff:192.168.1.1",
    "fd00::1",
    "169.254.10.10",
    "fe80::1",
    "100.64.0.7",
    "224.0.0.1",
    "0.0.0.0",
    "http://0/",
    "2130706433",
    "0x7f000001",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "127.1",
    "http://2130706433/",
    "ssh://0x7f.1:22",
    "169.254.169.254",
    "http://169.254.169.254/latest/meta-data/",
    "[fd00:ec2::254]",
    "metadata.google.internal",
    "http://metadata.google.internal/computeMetadata/v1/",
  ];
  for (const target of refused) {
    await t.rejects(assertPublicHost(target, policy), NetworkTargetError, target);
  }
  const error = await assertPublicHost("http://0x7f.1/", policy).catch((e: unknown) => e);
  t.match(error, { status: 422, code: "network_target_refused", message: /127\.0\.0\.1: a loopback address.*ALLOW_PRIVATE_NETWORK_TARGETS/ });
});

t.test("metadata and localhost names are refused by name, whatever DNS answers for them", async (t) => {
  // A resolver that answers a public address for every one of these names: only the name
  // check stands between them and a connection.
  const names = ["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal", "metadata.azure.com", "metadata.platformequinix.com"];
  const resolver = tableResolver(Object.fromEntries([...names, "localhost", "api.localhost"].map((name) => [name, [PUBLIC]])));
  for (const name of names) {
    await t.rejects(assertPublicHost(`http://${name}/`, { allowPrivate: true, resolver }), { code: "network_target_refused", message: /a cloud metadata address/ }, name);
  }
  for (const name of ["localhost", "api.localhost"]) {
    await t.rejects(assertPublicHost(name, { allowPrivate: false, resolver }), { code: "network_target_refused", message: /a loopback address/ }, name);
  }
});

t.test("a refusal names the IPv4 address an IPv6 literal carries, and only then", async (t) => {
  const policy = { allowPrivate: false };
  const message = async (target: string) => ((await assertPublicHost(target, policy).catch((e: unknown) => e)) as Error).message;
  t.match(await message("http://[::ffff:7f00:1]/"), /^Refused to connect to ::ffff:7f00:1 \(::ffff:7f00:1, which carries 127\.0\.0\.1\): a loopback address\./);
  t.match(await message("2002:a00:1::1"), /\(2002:a00:1::1, which carries 10\.0\.0\.1\): a private network address\./);
  t.match(await message("fd00::1"), /^Refused to connect to fd00::1: a private network address\./);
  t.match(await message("10.0.0.1"), /^Refused to connect to 10\.0\.0\.1: a private network address\./);
  // Every class is named in the refusal.
  const named: Array<[string, string]> = [
    ["fe80::1", "a link-local address"],
    ["100.64.0.1", "a carrier-grade NAT address"],
    ["224.0.0.1", "a multicast address"],
    ["0.0.0.0", "an unspecified address"],
    ["192.0.2.1", "a reserved address"],
    ["127.0.0.1", "a loopback address"],
    ["169.254.169.254", "a cloud metadata address"],
  ];
  for (const [target, name] of named) t.match(await message(target), `: ${name}. `, target);
});

t.test("names are judged by every address they resolve to", async (t) => {
  const resolver = tableResolver({
    "public.test": [PUBLIC],
    "mixed.test": [PUBLIC, "10.0.0.1"],
    "v6private.test": ["fd12::1"],
    "mapped.test": ["::ffff:169.254.169.254"],
  });
  const policy = { allowPrivate: false, resolver };
  t.same(await assertPublicHost("https://public.test/api", policy), [{ address: PUBLIC, family: 4 }]);
  const mixed = await assertPublicHost("mixed.test", policy).catch((e: Error) => e);
  t.match(mixed, { code: "network_target_refused", message: /^Refused to connect to mixed\.test: it resolves to a private network address\./, address: "10.0.0.1" });
  t.notMatch((mixed as Error).message, /10\.0\.0\.1/, "the message does not tell what the name resolves to");
  await t.rejects(assertPublicHost("v6private.test", policy), { code: "network_target_refused" });
  await t.rejects(assertPublicHost("mapped.test", { allowPrivate: true, resolver }), { message: /^Refused to connect to mapped\.test: it resolves to a cloud metadata address\. / });
  await t.rejects(assertPublicHost("missing.test", policy), { code: "host_not_found" });
});

t.test("allowPrivate lets loopback and private targets through, never metadata", async (t) => {
  const policy = { allowPrivate: true, resolver: tableResolver({ "internal.test": ["10.1.2.3"] }) };
  t.same(await assertPublicHost("127.0.0.1", policy), [{ address: "127.0.0.1", family: 4 }]);
  t.same(await assertPublicHost("http://0x7f.1/", policy), [{ address: "127.0.0.1", family: 4 }]);
  t.same(await assertPublicHost("internal.test", policy), [{ address: "10.1.2.3", family: 4 }]);
  await t.rejects(assertPublicHost("169.254.169.254", policy), { message: /cloud metadata address. Metadata endpoints are never allowed/ });
  await t.rejects(assertPublicHost("metadata.google.internal", policy), { message: /cloud metadata/ });
  await t.rejects(assertPublicHost("[::ffff:a9fe:a9fe]", policy), { message: /cloud metadata/ });
});

t.test("host notations: trailing dot, case, zone id, and what is no host at all", async (t) => {
  const resolver = tableResolver({ "metadata.google.internal.": [PUBLIC], "localhost.": [PUBLIC], "weird.test": ["not-an-address"] });
  await t.rejects(assertPublicHost("metadata.google.internal.", { allowPrivate: true, resolver }), { code: "network_target_refused" }, "a trailing dot");
  await t.rejects(assertPublicHost("METADATA.Google.Internal", { allowPrivate: true, resolver }), { code: "network_target_refused" }, "upper case");
  await t.rejects(assertPublicHost("LocalHost.", { allowPrivate: false, resolver }), { code: "network_target_refused", message: /a loopback address/ });
  t.same(await assertPublicHost("fe80::1%eth0", { allowPrivate: true }), [{ address: "fe80::1", family: 6 }], "the zone id is not part of the address");
  t.same(await assertPublicHost("public.test:443", { allowPrivate: false, resolver: tableResolver({ "public.test": [PUBLIC] }) }), [{ address: PUBLIC, family: 4 }], "a name with a port");
  const refusedAsNoHost: Array<[string, RegExp]> = [
    ["http://[zz/", /^Cannot resolve http:\/\/\[zz\/: not a valid URL\.$/],
    ["evil.test@10.0.0.1", /^Cannot resolve evil\.test@10\.0\.0\.1: not a host name\.$/],
    ["a b", /not a host name/],
    ["x\\y", /not a host name/],
    ["   ", /^Cannot resolve the host: not a host name\.$/],
    ["weird.test", /^Cannot resolve weird\.test: resolved to something that is not an address\.$/],
  ];
  for (const [target, message] of refusedAsNoHost) {
    await t.rejects(assertPublicHost(target, { allowPrivate: true, resolver }), { code: "host_not_found", status: 422, message }, target);
  }
});

t.test("DNS failures are told apart; an empty answer is no host", async (t) => {
  const failing = (code?: string): Resolver => async () => {
    throw Object.assign(new Error("lookup failed"), code ? { code } : {});
  };
  const message = async (resolver: Resolver) => ((await assertPublicHost("name.test", { allowPrivate: false, resolver }).catch((e: unknown) => e)) as Error).message;
  t.equal(await message(failing("ENOTFOUND")), "Cannot resolve name.test: no such host.");
  t.equal(await message(failing("ENODATA")), "Cannot resolve name.test: no such host.");
  t.equal(await message(failing("ESERVFAIL")), "Cannot resolve name.test: DNS lookup failed (ESERVFAIL).");
  t.equal(await message(failing()), "Cannot resolve name.test: DNS lookup failed (error).");
  const error = await assertPublicHost("name.test", { allowPrivate: false, resolver: async () => [] }).catch((e: unknown) => e);
  t.type(error, HostLookupError);
  t.match(error, { name: "HostLookupError", code: "host_not_found", message: "Cannot resolve name.test: no such host." });
});

t.test("the system resolver: localhost resolves, through the guard, when private targets are allowed", async (t) => {
  // A real lookup (the hosts file): every answer is an address of the family it is given as.
  const addresses = await assertPublicHost("localhost", { allowPrivate: true });
  t.ok(addresses.some((a) => a.address === "127.0.0.1" && a.family === 4), JSON.stringify(addresses));
  for (const { address, family } of addresses) t.equal(family, address.includes(":") ? 6 : 4, address);
  await t.rejects(assertPublicHost("localhost", { allowPrivate: false }), { code: "network_target_refused" });
  t.same(await assertPublicHost("localhost", { allowPrivate: true, resolver: tableResolver({ localhost: ["127.0.0.1"] }) }), [{ address: "127.0.0.1", family: 4 }]);
});

t.test("resolvePublicAddress connects over IPv4 when the name has both", async (t) => {
  const resolver = tableResolver({ "dual.test": ["2606:4700::1111", PUBLIC], "v6.test": ["2606:4700::1111"] });
  t.same(await resolvePublicAddress("dual.test", { allowPrivate: false, resolver }), { address: PUBLIC, family: 4 });
  t.same(await resolvePublicAddress("v6.test", { allowPrivate: false, resolver }), { address: "2606:4700::1111", family: 6 });
});

t.test("the guarded lookup answers in the family and form the socket asks for", async (t) => {
  const lookup = createGuardedLookup({ allowPrivate: false, resolver: tableResolver({ "dual.test": ["2606:4700::1111", PUBLIC], "v4.test": [PUBLIC] }) });
  const ask = (host: string, options: Parameters<typeof lookup>[1]) =>
    new Promise<{ error: Error | null; address: unknown; family: unknown }>((resolve) =>
      lookup(host, options, (error, address, family) => resolve({ error, address, family })),
    );
  t.same(await ask("dual.test", {}), { error: null, address: "2606:4700::1111", family: 6 }, "the first answer");
  t.same(await ask("dual.test", { family: 4 }), { error: null, address: PUBLIC, family: 4 });
  t.same(await ask("dual.test", { family: "IPv4" }), { error: null, address: PUBLIC, family: 4 });
  t.same(await ask("dual.test", { family: "IPv6" }), { error: null, address: "2606:4700::1111", family: 6 });
  t.same(await ask("dual.test", 4 as never), { error: null, address: PUBLIC, family: 4 }, "the family as a number");
  t.same(await ask("dual.test", { all: true, family: 6 }), { error: null, address: [{ address: "2606:4700::1111", family: 6 }], family: undefined });
  t.same(await ask("dual.test", { all: true }), { error: null, address: [{ address: "2606:4700::1111", family: 6 }, { address: PUBLIC, family: 4 }], family: undefined });
  const none = await ask("v4.test", { family: 6 });
  t.type(none.error, HostLookupError);
  t.match(none, { error: { code: "host_not_found", message: "Cannot resolve v4.test: no IPv6 address." }, address: "", family: 0 });
  const refused = await ask("10.0.0.1.test", {});
  t.match(refused, { error: { code: "host_not_found" }, address: "", family: 0 }, "a failed resolution reaches the callback");
});

t.test("a raw socket with the guarded lookup connects to what the guard allows only", async (t) => {
  const server = await countingServer(t);
  const connect = (host: string, lookup: net.LookupFunction) =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host, port: server.port, lookup });
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", reject);
    });
  const allowed = createGuardedLookup({ allowPrivate: true, resolver: tableResolver({ "peer.test": ["127.0.0.1"] }) });
  await connect("peer.test", allowed);
  t.equal(server.connections(), 1, "the name resolved through the guard's resolver");

  const rebinding = rebindingResolver("127.0.0.1");
  const policy = { allowPrivate: false, resolver: rebinding };
  t.same(await assertPublicHost("rebind.test", policy), [{ address: PUBLIC, family: 4 }], "validation sees a public answer");
  await t.rejects(connect("rebind.test", createGuardedLookup(policy)), NetworkTargetError, "the connection sees the private answer and is refused");
  t.equal(rebinding.calls, 2);
  t.equal(server.connections(), 1, "no connection reached the server");
});

t.test("guarded fetch: DNS rebinding, literals, redirects into private space", async (t) => {
  const server = await countingServer(t);
  const rebinding = rebindingResolver("127.0.0.1");
  const policy = { allowPrivate: false, resolver: rebinding };
  await assertPublicHost(`http://rebind.test:${server.port}/hook`, policy);
  const guarded = createGuardedFetch(policy);
  t.teardown(() => guarded.close());
  const failure = await guarded.fetch(`http://rebind.test:${server.port}/hook`).catch((e: Error) => e);
  t.type(failure, Error);
  t.type((failure as Error).cause, NetworkTargetError, "fetch fails with the guard's refusal as cause");
  for (const literal of [`http://127.0.0.1:${server.port}/`, `http://[::ffff:7f00:1]:${server.port}/`, `http://0x7f.1:${server.port}/`]) {
    const error = await guarded.fetch(literal).catch((e: Error) => e);
    t.type((error as Error).cause, NetworkTargetError, literal);
  }
  t.equal(server.requests(), 0, "the loopback server saw no request");

  // Allowed: a name that resolves to loopback reaches the server only through the guard's resolver.
  const open = createGuardedFetch({ allowPrivate: true, resolver: tableResolver({ "peer.test": ["127.0.0.1"] }) });
  t.teardown(() => open.close());
  const response = await open.fetch(`http://peer.test:${server.port}/`);
  t.equal(await response.text(), "reached");
  t.equal(server.requests(), 1);
});

t.test("a redirect is checked again when fetch follows it", async (t) => {
  const target = await countingServer(t);
  let redirects = 0;
  const redirector = http.createServer((_req, res) => {
    redirects += 1;
    res.writeHead(302, { location: `http://private.test:${target.port}/secret` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => redirector.close(() => resolve())));
  // The redirecting host may be reached (allowed by this resolver's public answer mapped to
  // loopback for the test); the name it redirects to answers with a refused address.
  const resolver = tableResolver({ "public.test": ["127.0.0.1"], "private.test": ["169.254.169.254"] });
  const guarded = createGuardedFetch({ allowPrivate: true, resolver });
  t.teardown(() => guarded.close());
  const port = (redirector.address() as AddressInfo).port;
  const error = await guarded.fetch(`http://public.test:${port}/start`).catch((e: Error) => e);
  t.equal(redirects, 1, "the first hop was made");
  t.type((error as Error).cause, NetworkTargetError, "the redirect target is refused");
  t.equal(target.requests(), 0);
});
