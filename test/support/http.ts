/**
 * A small HTTP client for API tests: JSON in, parsed JSON out, status and headers kept.
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send `body` as-is (string/Buffer) instead of JSON. */
  raw?: boolean;
}

export async function request<T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: RequestInit["body"];
  if (options.body !== undefined) {
    if (options.raw) body = options.body as RequestInit["body"];
    else {
      headers["content-type"] ??= "application/json";
      body = JSON.stringify(options.body);
    }
  }
  const answer = await readAnswer(await fetch(`${baseUrl}${path}`, { method, headers, body }));
  return { ...answer, body: answer.body as T };
}

/** A response's status, headers, text and (when the text is JSON) parsed body. */
export async function readAnswer(response: Response): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A client bound to a base URL and (optionally) a bearer token. */
export function client(baseUrl: string, token?: string) {
  const call = (method: string) => (path: string, body?: unknown, extra: Omit<RequestOptions, "body" | "token"> = {}) =>
    request(baseUrl, method, path, { ...extra, ...(token ? { token } : {}), ...(body !== undefined ? { body } : {}) });
  return { get: call("GET"), post: call("POST"), put: call("PUT"), patch: call("PATCH"), delete: call("DELETE") };
}
