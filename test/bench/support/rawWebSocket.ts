/**
 * A minimal WebSocket client over a plain TCP socket, for benchmarks that hold thousands of
 * sockets in one process: the opening handshake, unmasked server frames read in place, and
 * masked text frames out. It does only what the realtime benchmarks need (text, ping, pong,
 * close; no extensions, no fragmented messages) so that the clients, which share the machine's
 * cores with the server they measure, spend as little CPU per received frame as they can:
 * `ws` parses each frame through a Writable and emits it through two event layers, and the
 * benchmark's clients took more CPU per event than the server (docs/perf/README.md).
 */
import { randomBytes } from "node:crypto";
import net from "node:net";

const opText = 0x1;
const opClose = 0x8;
const opPing = 0x9;
const opPong = 0xa;

export interface RawWebSocketOptions {
  /** Loopback source address to connect from. */
  localAddress?: string;
  /** Each text message, as a string, with the socket it came on (also before `connect` resolves). */
  onText: (text: string, socket: RawWebSocket) => void;
  /** Once, when the connection ends for any reason after opening. */
  onClose?: () => void;
}

export class RawWebSocket {
  readonly #socket: net.Socket;
  readonly #onText: (text: string, socket: RawWebSocket) => void;
  #pending: Buffer | null = null;
  #open = false;
  #closed = false;

  private constructor(socket: net.Socket, options: RawWebSocketOptions) {
    this.#socket = socket;
    this.#onText = options.onText;
    socket.once("close", () => {
      if (this.#closed) return;
      this.#closed = true;
      options.onClose?.();
    });
  }

  /** Connects and completes the opening handshake; rejects on any failure before that. */
  static connect(url: string, options: RawWebSocketOptions): Promise<RawWebSocket> {
    const target = new URL(url);
    if (target.protocol !== "ws:") throw new Error(`only ws: URLs are supported, got ${url}`);
    const socket = net.connect({ host: target.hostname, port: Number(target.port || 80), ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    socket.setNoDelay(true);
    const client = new RawWebSocket(socket, options);
    return new Promise((resolve, reject) => {
      let head = Buffer.alloc(0);
      const fail = (error: Error) => {
        socket.destroy();
        reject(error);
      };
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) {
          if (head.length > 16_384) fail(new Error("handshake answer too long"));
          return;
        }
        socket.off("data", onData);
        socket.off("error", fail);
        const status = head.toString("latin1", 0, head.indexOf("\r\n"));
        if (!/^HTTP\/1\.1 101 /.test(status)) return fail(new Error(`handshake refused: ${status}`));
        client.#open = true;
        socket.on("data", (data: Buffer) => client.#read(data));
        socket.on("error", () => socket.destroy());
        resolve(client);
        if (head.length > end + 4) client.#read(head.subarray(end + 4));
      };
      socket.on("data", onData);
      socket.once("error", fail);
      socket.once("connect", () => {
        socket.write(
          `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
    });
  }

  /** Sends one text message (client frames are masked, as the protocol requires). */
  send(text: string): void {
    this.#frame(opText, Buffer.from(text));
  }

  /** Closes the TCP connection at once. */
  terminate(): void {
    this.#socket.destroy();
  }

  #frame(opcode: number, payload: Buffer): void {
    if (!this.#open || this.#socket.destroyed) return;
    const length = payload.length;
    const extended = length < 126 ? 0 : length < 65_536 ? 2 : 8;
    const frame = Buffer.allocUnsafe(2 + extended + 4 + length);
    frame[0] = 0x80 | opcode;
    frame[1] = 0x80 | (extended === 0 ? length : extended === 2 ? 126 : 127);
    if (extended === 2) frame.writeUInt16BE(length, 2);
    else if (extended === 8) frame.writeBigUInt64BE(BigInt(length), 2);
    const maskAt = 2 + extended;
    randomBytes(4).copy(frame, maskAt);
    for (let i = 0; i < length; i += 1) frame[maskAt + 4 + i] = payload[i]! ^ frame[maskAt + (i & 3)]!;
    this.#socket.write(frame);
  }

  /** Takes every whole frame in what arrived; keeps a partial one for the next chunk. */
  #read(chunk: Buffer): void {
    const data = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#pending = null;
    let at = 0;
    while (data.length - at >= 2) {
      const first = data[at]!;
      const second = data[at + 1]!;
      let length = second & 0x7f;
      let start = at + 2;
      if (length === 126) {
        if (data.length - at < 4) break;
        length = data.readUInt16BE(at + 2);
        start = at + 4;
      } else if (length === 127) {
        if (data.length - at < 10) break;
        length = Number(data.readBigUInt64BE(at + 2));
        start = at + 10;
      }
      if ((second & 0x80) !== 0 || (first & 0x80) === 0) {
        // Servers never mask; this client never asks for fragments. Anything else is a broken peer.
        this.#socket.destroy();
        return;
      }
      if (data.length < start + length) break;
      const opcode = first & 0x0f;
      if (opcode === opText) this.#onText(data.toString("utf8", start, start + length), this);
      else if (opcode === opPing) this.#frame(opPong, data.subarray(start, start + length));
      else if (opcode === opClose) {
        this.#socket.end();
        return;
      } else if (opcode !== opPong) {
        this.#socket.destroy();
        return;
      }
      at = start + length;
    }
    if (at < data.length) this.#pending = Buffer.from(data.subarray(at));
  }
}
