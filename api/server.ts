/**
 * The web process: listens, routes WebSocket upgrades at /app/{key} to the realtime
 * server, and shuts down gracefully on request: stop accepting, let in-flight requests
 * finish, tell WebSocket clients to reconnect elsewhere; whatever is still open after
 * SHUTDOWN_TIMEOUT_MS (requests, sockets) is cut.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { ConfigError, type Config } from "../shared/config.ts";
import type { AppDeps } from "./context.ts";
import { makeApp, type MakeAppOptions } from "./app.ts";
import { RealtimeServer } from "./realtime/socketServer.ts";

export interface RunningWeb {
  server: http.Server;
  realtime: RealtimeServer;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

function rawResponse(status: string, message: string, code: string): string {
  const body = JSON.stringify({ message, code });
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
/** Answers for requests Node's HTTP parser rejects before Koa sees them. */
const badRequest = rawResponse("400 Bad Request", "The request could not be understood.", "bad_request");
const headersTooLarge = rawResponse("431 Request Header Fields Too Large", "The request headers are too large.", "headers_too_large");

/** The HTTP server with the web process's limits, not yet handling requests. */
export const createHttpServer = () => http.createServer({ requestTimeout: 120_000, headersTimeout: 30_000, maxHeaderSize: 32 * 1024 });

export interface StartWebOptions extends MakeAppOptions {
  /**
   * A server from `createHttpServer` that is already listening (tests bind port 0 first,
   * since the configuration names the URL); `port` and `host` then only name it.
   */
  server?: http.Server;
}

/**
 * Refuses an open /metrics in production: its numbers describe the installation (routes,
 * jobs, users), so it needs METRICS_TOKEN unless METRICS_PUBLIC says it may be public.
 * @throws ConfigError
 */
export function assertMetricsProtected(config: Config): void {
  if (config.env === "production" && !config.metricsToken && !config.metricsPublic) {
    throw new ConfigError(["METRICS_TOKEN is missing: required in production to protect /metrics (or set METRICS_PUBLIC=true to serve it openly)"]);
  }
}

/** Starts the HTTP and WebSocket server on `port` (0: any free port). */
export async function startWeb(deps: AppDeps, port: number, host: string, options: StartWebOptions = {}): Promise<RunningWeb> {
  assertMetricsProtected(deps.config);
  const app = makeApp(deps, options);
  const realtime = new RealtimeServer(deps);
  const server = options.server ?? createHttpServer();
  server.on("request", app.callback());
  server.keepAliveTimeout = 65_000;
  // Upgraded sockets leave the HTTP server's bookkeeping (closeAllConnections does not
  // reach them), so shutdown keeps its own list to cut the ones still open at its deadline.
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req, socket, head) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    if (!realtime.handleUpgrade(req, socket, head)) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    }
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(error.code === "HPE_HEADER_OVERFLOW" ? headersTooLarge : badRequest);
  });
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
  }
  const address = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  let stopping: Promise<void> | undefined;
  return {
    server,
    realtime,
    port: address.port,
    url: `http://${shownHost}:${address.port}`,
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // One deadline for everything: requests still running are cut off, and so are
        // WebSockets whose clients never answered the closing handshake (ws alone would
        // wait 30 s for each of them, and the server's close waits for their sockets).
        const timer = setTimeout(() => {
          server.closeAllConnections();
          for (const socket of upgraded) socket.destroy();
        }, deps.config.shutdownTimeoutMs);
        await realtime.close();
        await closed;
        await deps.timings.stop();
        await deps.rollup.stop();
        await deps.compiler.close();
        clearTimeout(timer);
      })()),
  };
}

