/**
 * The request URL as the access log writes it: query parameters that work as credentials on
 * their own are masked. A git sign-in's callback carries the provider's authorization `code`
 * and our `state`; a signed attachment link its `signature` (anyone holding the link can
 * download until it expires). Logs are read by more people, for longer, than those links
 * are meant for.
 */

/** Query parameters whose values are never logged. */
const SECRET_PARAMS = new Set(["code", "state", "signature", "token", "access_token", "refresh_token"]);

/** `url` (path and query) with the values of secret parameters replaced by `[redacted]`. */
export function loggedUrl(url: string): string {
  const query = url.indexOf("?");
  if (query === -1) return url;
  const masked = url
    .slice(query + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq === -1 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, " "));
      } catch {
        // A malformed escape: the raw name is what is compared.
      }
      return SECRET_PARAMS.has(decoded.toLowerCase()) && eq !== -1 ? `${name}=[redacted]` : pair;
    })
    .join("&");
  return `${url.slice(0, query)}?${masked}`;
}
