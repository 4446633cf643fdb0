/**
 * A minimal HTTP server for the hosting-API stand-ins: routes as (method, path regex with
 * named groups, handler), an authorization check, a request log, and one-shot faults that
 * imitate a crash: `before` answers 500 without doing anything, `after` does the work and
 * then drops the connection, so the client never learns that it succeeded. A one-shot
 * redirect answers the next matching request with a 30x to another address instead.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A request as route handlers see it. */
export interface PeerRequest {
  method: string;
  url: URL;
  params: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A handler's answer (JSON unless `raw`). */
export interface PeerResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One route. */
export interface Route {
  method: string;
  pattern: RegExp;
  handler: (request: PeerRequest) => PeerResponse | Promise<PeerResponse>;
}

/** A one-shot fault on the first request matching method and path pattern. */
export interface Fault {
  method: string;
  pattern: RegExp;
  when: "before" | "after";
}

/** A one-shot redirect of the first request matching method and path pattern. */
export interface Redirect {
  method: string;
  pattern: RegExp;
  status: 301 | 302 | 303 | 307 | 308;
  location: string;
}

/** A running stand-in. */
export interface HttpPeer {
  url: string;
  /** Every request received, in order (`POST /repos/o/r/pulls`). */
  requests: string[];
  /** Adds a fault for the next matching request. */
  failOnce(fault: Fault): void;
  /** Answers the next matching request (before its authorization check) with the redirect. */
  redirectOnce(redirect: Redirect): void;
  close(): Promise<void>;
}

/** Parses a JSON body ({} when empty). */
export const jsonBody = <T>(request: PeerRequest): T => (request.body.length ? JSON.parse(request.body.toString()) : {}) as T;

/** Starts a stand-in on 127.0.0.1. */
export async function startHttpPeer(routes: Route[], authorize: (request: PeerRequest) => PeerResponse | null): Promise<HttpPeer> {
  const requests: string[] = [];
  const faults: Fault[] = [];
  const redirects: Redirect[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stand-in");
      const method = req.method ?? "GET";
      requests.push(`${method} ${decodeURIComponent(url.pathname)}`);
      const send = (answer: PeerResponse) => {
        const body = answer.body === undefined ? "" : JSON.stringify(answer.body);
        res.writeHead(answer.status, { ...(body ? { "content-type": "application/json; charset=utf-8" } : {}), ...answer.headers });
        res.end(body);
      };
      const redirectIndex = redirects.findIndex((r) => r.method === method && r.pattern.test(decodeURIComponent(url.pathname)));
      if (redirectIndex >= 0) {
        const redirect = redirects.splice(redirectIndex, 1)[0]!;
        return send({ status: redirect.status, headers: { location: redirect.location } });
      }
      const faultIndex = faults.findIndex((f) => f.method === method && f.pattern.test(decodeURIComponent(url.pathname)));
      const fault = faultIndex >= 0 ? faults.splice(faultIndex, 1)[0] : undefined;
      if (fault?.when === "before") return send({ status: 500, body: { message: "Internal stand-in failure" } });
      // Hosts accept encoded slashes in ref names (`heads%2Fmain`): routes see decoded paths.
      const path = decodeURIComponent(url.pathname);
      let params: Record<string, string> = {};
      const route = routes.find((r) => {
        const match = r.method === method ? r.pattern.exec(path) : null;
        if (match) params = { ...match.groups };
        return Boolean(match);
      });
      const request: PeerRequest = { method, url, params, headers: req.headers, body: Buffer.concat(chunks) };
      const denied = authorize(request);
      if (denied) return send(denied);
      if (!route) return send({ status: 404, body: { message: `No stand-in route for ${method} ${url.pathname}` } });
      Promise.resolve(route.handler(request)).then(
        (answer) => (fault?.when === "after" ? req.socket.destroy() : send(answer)),
        (error: Error) => send({ status: 500, body: { message: error.message } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failOnce: (fault) => void faults.push(fault),
    redirectOnce: (redirect) => void redirects.push(redirect),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
