/**
 * Pusher Channels protocol v7 frames (https://pusher.com/docs/channels/library_auth_reference/pusher-websockets-protocol/).
 * Every frame is JSON `{event, channel?, data}`; server-to-client `data` is a JSON-encoded
 * string. Close codes 4000–4099 tell the client not to reconnect, 4100–4199 to reconnect
 * with back-off, 4200–4299 to reconnect at once.
 */
export const PROTOCOL_VERSION = 7;

export const closeCodes = {
  applicationDoesNotExist: 4001,
  unsupportedProtocol: 4007,
  overCapacity: 4100,
  genericReconnect: 4200,
  pongNotReceived: 4201,
  closedAfterInactivity: 4202,
} as const;

/** Serialises a server → client frame. */
export function frame(event: string, data: unknown, channel?: string): string {
  return JSON.stringify(channel === undefined ? { event, data: JSON.stringify(data) } : { event, channel, data: JSON.stringify(data) });
}

/** A `pusher:error` frame (the socket stays open). */
export const errorFrame = (message: string, code: number | null = null) => JSON.stringify({ event: "pusher:error", data: { message, code } });

export interface ClientFrame {
  event: string;
  channel?: string;
  data?: unknown;
}

/** Parses a client frame; undefined when it is not one. */
export function parseClientFrame(text: string): ClientFrame | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return undefined;
    const { event, channel, data } = value as Record<string, unknown>;
    if (typeof event !== "string") return undefined;
    const parsedData = typeof data === "string" && data.startsWith("{") ? safeJson(data) : data;
    return { event, ...(typeof channel === "string" ? { channel } : {}), data: parsedData };
  } catch {
    return undefined;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
