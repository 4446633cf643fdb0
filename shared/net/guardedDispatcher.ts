/**
 * An undici dispatcher for Node's built-in `fetch` (`fetch(url, { dispatcher })`, and the
 * `agent` option of Gitbeaker, which passes it on as the dispatcher) whose connections go
 * through the network guard: IP-literal hosts are checked before the request, names are
 * resolved and checked by the guarded lookup when the socket connects, and every redirect
 * `fetch` follows is dispatched, and so checked, again.
 *
 * It speaks node:http/https underneath rather than using the `undici` package, which is not
 * a dependency of the service; it implements the dispatcher contract `fetch` uses (the
 * `dispatch(options, handler)` call with the onConnect/onHeaders/onData/onComplete/onError
 * handler, as of the undici bundled with Node 24).
 *
 * With `origin`, the dispatcher talks to that origin only: a request anywhere else (a
 * redirect `fetch` follows) fails before it connects. `fetch` drops `Authorization` on a
 * redirect to another origin but keeps every other header (GitLab's `PRIVATE-TOKEN`) and,
 * on 307/308, the body; a client holding credentials of one host pins that host.
 */
import http from "node:http";
import https from "node:https";
import { createGuardedLookup } from "./guardedLookup.ts";
import { checkAddress, literalAddress, type NetworkPolicy } from "./networkGuard.ts";

/** The part of undici's DispatchOptions that fetch sends. */
export interface DispatchOptions {
  origin?: string | URL;
  path: string;
  method: string;
  headers?: Record<string, string | string[] | undefined> | string[] | null;
  body?: AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Uint8Array | string | null;
}

/** The handler fetch passes to `dispatch` (undici's legacy handler interface). */
export interface DispatchHandler {
  onConnect?(abort: (reason?: unknown) => void): void;
  onResponseStarted?(): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(error: Error): void;
}

/** Options of a guarded dispatcher. */
export interface GuardedDispatcherOptions {
  /** Extra TLS settings (a private CA for a self-hosted instance, for example). */
  tls?: https.AgentOptions;
  /** The only origin requests may go to (`https://gitlab.example.com`); any other is refused. */
  origin?: string;
}

/** A request (a followed redirect) to another origin than the one a dispatcher is pinned to. */
export class OtherOriginError extends Error {
  readonly origin: string;
  readonly target: string;
  constructor(origin: string, target: string) {
    super(`${origin} answered with a redirect to ${target}, another host; it was not followed, so the credentials for ${origin} were not sent there.`);
    this.name = "OtherOriginError";
    this.origin = origin;
    this.target = target;
  }
}

/** A fetch dispatcher that refuses what the network guard refuses, at connection time. */
export class GuardedDispatcher {
  readonly #policy: NetworkPolicy;
  readonly #lookup: ReturnType<typeof createGuardedLookup>;
  readonly #httpAgent: http.Agent;
  readonly #httpsAgent: https.Agent;
  readonly #origin: string | undefined;

  constructor(policy: NetworkPolicy, options: GuardedDispatcherOptions = {}) {
    this.#policy = policy;
    // An origin that does not parse matches no request: everything is refused.
    this.#origin = options.origin === undefined ? undefined : URL.canParse(options.origin) ? new URL(options.origin).origin : options.origin;
    this.#lookup = createGuardedLookup(policy);
    this.#httpAgent = new http.Agent({ keepAlive: true });
    this.#httpsAgent = new https.Agent({ keepAlive: true, ...options.tls });
  }

  /** Starts one request; answers through `handler` like an undici dispatcher. */
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean {
    let finished = false;
    let request: http.ClientRequest | undefined;
    const fail = (error: unknown) => {
      if (finished) return;
      finished = true;
      request?.destroy();
      handler.onError?.(error instanceof Error ? error : new Error(String(error)));
    };
    handler.onConnect?.((reason) => fail(reason ?? new Error("Request aborted")));
    if (finished) return true;
    try {
      const url = new URL(options.path, options.origin);
      if (this.#origin !== undefined && url.origin !== this.#origin) throw new OtherOriginError(this.#origin, url.origin);
      const hostname = url.hostname.replace(/^\[|\]$/g, "");
      const literal = literalAddress(hostname);
      if (literal) checkAddress(hostname, literal.address, this.#policy);
      request = this.#request(url, options);
    } catch (error) {
      fail(error);
      return true;
    }
    request.on("error", fail);
    request.on("response", (response) => {
      if (finished) return void response.destroy();
      handler.onResponseStarted?.();
      const raw = response.rawHeaders.map((value) => Buffer.from(value, "latin1"));
      const resume = () => void response.resume();
      if (handler.onHeaders?.(response.statusCode ?? 0, raw, resume, response.statusMessage ?? "") === false) response.pause();
      response.on("data", (chunk: Buffer) => {
        if (!finished && handler.onData?.(chunk) === false) response.pause();
      });
      response.on("end", () => {
        if (finished) return;
        finished = true;
        handler.onComplete?.(response.rawTrailers.map((value) => Buffer.from(value, "latin1")));
      });
      response.on("error", fail);
    });
    writeBody(request, options.body).catch(fail);
    return true;
  }

  #request(url: URL, options: DispatchOptions): http.ClientRequest {
    const secure = url.protocol === "https:";
    if (!secure && url.protocol !== "http:") throw new Error(`Unsupported protocol ${url.protocol}`);
    return (secure ? https : http).request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: options.method,
      headers: headerObject(options.headers),
      agent: secure ? this.#httpsAgent : this.#httpAgent,
      lookup: this.#lookup,
    });
  }

  /** Closes idle keep-alive sockets. */
  async close(): Promise<void> {
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }

  /** Same as close: nothing is queued beyond the sockets. */
  async destroy(): Promise<void> {
    await this.close();
  }
}

function headerObject(headers: DispatchOptions["headers"]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!headers) return out;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) out[headers[i]!] = headers[i + 1]!;
    return out;
  }
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value;
  return out;
}

async function writeBody(request: http.ClientRequest, body: DispatchOptions["body"]): Promise<void> {
  if (body === null || body === undefined) return void request.end();
  if (typeof body === "string" || body instanceof Uint8Array) return void request.end(body);
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    if (request.destroyed) return;
    if (!request.write(chunk)) {
      await new Promise<void>((resolve) => {
        request.once("drain", resolve);
        request.once("close", resolve);
      });
    }
  }
  request.end();
}
