/**
 * A server → client WebSocket text frame built once and written as-is to every socket of a
 * channel. Server frames are never masked (RFC 6455 §5.1) and compression is off, so the
 * same bytes are valid on every connection. `ws.send()` would build a new header per
 * socket and write it with the payload through cork/write/write/uncork (a writev with its
 * own request object); the fan-out writes one shared buffer per socket instead.
 */
import type { Socket } from "node:net";
import { WebSocket } from "ws";

/** The complete frame (FIN + text opcode, payload length, payload) for a UTF-8 payload. */
export function prepareTextFrame(payload: Buffer): Buffer {
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
  payload.copy(frame, headerLength);
  return frame;
}

/** ws's own state, read to know the raw socket may be written directly (ws 8). */
interface WsInternals {
  _socket?: Socket;
  _sender?: { _queue?: unknown[] };
}

/**
 * Writes a prepared frame to an open WebSocket. Falls back to `ws.send` when ws has sends of
 * its own queued (never with compression off, but a direct write must not overtake them) or
 * its internals are not what this was written against.
 */
export function writePrepared(ws: WebSocket, frame: Buffer, payload: Buffer): void {
  const { _socket: socket, _sender: sender } = ws as unknown as WsInternals;
  if (ws.readyState === WebSocket.OPEN && socket && !socket.destroyed && sender?._queue?.length === 0) {
    socket.write(frame);
  } else {
    ws.send(payload, { binary: false, compress: false });
  }
}
