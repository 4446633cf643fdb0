/**
 * A JSON client for benchmarks whose server runs in the benchmark's own process: node:http
 * over one kept-alive socket. `fetch` (undici) cost ~2 ms of that process's CPU per request
 * of the form layout benchmark, which the figure charged to the route it measures.
 */
import http from "node:http";

export interface JsonAnswer {
  status: number;
  text: string;
  body: any;
}

/** A client of the server at `base` (http://host:port) sending `token` as its bearer token. */
export function jsonClient(base: string, token: string) {
  const { hostname, port } = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<JsonAnswer>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: http.OutgoingHttpHeaders = { accept: "application/json", authorization: `Bearer ${token}` };
      if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
      const req = http.request({ hostname, port, path, method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, body: parsed });
        });
      });
      req.on("error", reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}
