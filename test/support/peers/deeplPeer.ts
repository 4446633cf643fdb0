/**
 * A translation provider stand-in with the DeepL API's shape: `POST /v2/translate`,
 * `Authorization: DeepL-Auth-Key <key>`, JSON `{text, target_lang, source_lang?}` of at most
 * 50 texts, answered `{translations: [{detected_source_language, text}]}`. It "translates" by
 * prefixing the target language (`[DE] Order items`) and keeps every request it answered.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

export interface DeeplRequest {
  text: string[];
  target_lang: string;
  source_lang?: string;
}

export interface DeeplPeer {
  url: string;
  key: string;
  requests: DeeplRequest[];
}

export async function startDeeplPeer(t: Test, key = "deepl-test-key:fx"): Promise<DeeplPeer> {
  const requests: DeeplRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.method !== "POST" || req.url !== "/v2/translate") return send(404, { message: "Not found" });
      if (req.headers.authorization !== `DeepL-Auth-Key ${key}`) return send(403, { message: "Authorization failure" });
      let body: DeeplRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as DeeplRequest;
      } catch {
        return send(400, { message: "Bad request" });
      }
      if (!Array.isArray(body.text) || body.text.length === 0 || body.text.length > 50 || !body.target_lang) return send(400, { message: "Bad request" });
      requests.push(body);
      send(200, { translations: body.text.map((text) => ({ detected_source_language: body.source_lang ?? "EN", text: `[${body.target_lang}] ${text}` })) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key, requests };
}
