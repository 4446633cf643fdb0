/**
 * A push service stand-in on loopback (RFC 8030), with the browser side of its
 * subscriptions: `subscription()` makes a PushSubscription the way a browser does (a P-256
 * key pair and a 16-byte auth secret of its own) under an endpoint of this server. The
 * server checks each message's VAPID authorization (RFC 8292: an ES256 JWT signed by the
 * key in `k`, for this origin) and keeps what it received; `decrypt` opens a message with
 * the subscription's private key (aes128gcm, RFC 8291) through http_ece. An endpoint can
 * be told to answer a status (404/410: the subscription is gone).
 */
import { createECDH, randomBytes, type ECDH } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { importJWK, jwtVerify } from "jose";
import type { Test } from "tap";

const ece = createRequire(import.meta.url)("http_ece") as {
  decrypt(buffer: Buffer, params: { version: "aes128gcm"; privateKey: ECDH; authSecret: Buffer }): Buffer;
};

/** A message as the push service received it. */
export interface ReceivedPush {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The VAPID JWT verified against its `k` key for this origin. */
  vapidValid: boolean;
  /** The `k` of the VAPID header (the application server's public key). */
  vapidKey: string | null;
}

interface BrowserSide {
  ecdh: ECDH;
  auth: Buffer;
}

export interface PushService {
  url: string;
  received: ReceivedPush[];
  /** A new browser subscription (the JSON a browser's PushSubscription gives). */
  subscription(): { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
  /** The plaintext of `message`. */
  decrypt(message: ReceivedPush): string;
  /** Makes `endpoint` answer `status` from now on. */
  answer(endpoint: string, status: number): void;
  close(): Promise<void>;
}

async function verifyVapid(header: string | undefined, origin: string): Promise<{ valid: boolean; key: string | null }> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  if (!match) return { valid: false, key: null };
  const raw = Buffer.from(match[2]!, "base64url");
  try {
    const key = await importJWK({ kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33, 65).toString("base64url") }, "ES256");
    const { payload } = await jwtVerify(match[1]!, key, { audience: origin, algorithms: ["ES256"] });
    return { valid: typeof payload.sub === "string" && typeof payload.exp === "number", key: match[2]! };
  } catch {
    return { valid: false, key: match[2]! };
  }
}

/** Starts the stand-in; it stops in `t.teardown`. */
export async function startPushService(t: Test): Promise<PushService> {
  const browsers = new Map<string, BrowserSide>();
  const statuses = new Map<string, number>();
  const received: ReceivedPush[] = [];
  let origin = "";
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        const id = (req.url ?? "").replace(/^\/push\//, "");
        if (req.method !== "POST" || !browsers.has(id)) {
          res.writeHead(404).end();
          return;
        }
        const status = statuses.get(id);
        if (status) {
          res.writeHead(status).end();
          return;
        }
        const vapid = await verifyVapid(req.headers.authorization, origin);
        if (!vapid.valid) {
          res.writeHead(401).end();
          return;
        }
        received.push({ id, headers: req.headers, body: Buffer.concat(chunks), vapidValid: vapid.valid, vapidKey: vapid.key });
        res.writeHead(201, { location: `${origin}/message/${received.length}` }).end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const service: PushService = {
    url: origin,
    received,
    subscription() {
      const id = randomBytes(12).toString("hex");
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const auth = randomBytes(16);
      browsers.set(id, { ecdh, auth });
      return { endpoint: `${origin}/push/${id}`, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") } };
    },
    decrypt(message) {
      const browser = browsers.get(message.id);
      if (!browser) throw new Error(`no subscription ${message.id}`);
      return ece.decrypt(message.body, { version: "aes128gcm", privateKey: browser.ecdh, authSecret: browser.auth }).toString("utf8");
    },
    answer(endpoint, status) {
      statuses.set(endpoint.replace(/^.*\/push\//, ""), status);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  t.teardown(() => service.close());
  return service;
}
