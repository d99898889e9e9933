// HTTP/2 header fields (RFC 9113 §8.2, §8.3): what makes a request's header list well formed,
// as Go's http2 server checks it, and the HTTP/1.1 connection fields a response never carries.

/**
 * Headers specific to an HTTP/1.1 connection (RFC 9113 §8.2.2): never sent in a response; in a
 * request answered 400 as Go's http2 server answers it (in this order it looks for them).
 */
export const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/**
 * The request's content-length: -1 without one, undefined when it is not a decimal number (a
 * repeated content-length arrives joined with ", " and is refused as well, as RFC 9110 §8.6 allows).
 */
export function contentLength(headers: Record<string, string>): number | undefined {
  const v = headers['content-length'];
  if (v === undefined) return -1;
  if (v.length === 0 || v.length > 15) return undefined;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(v);
}

const REQUEST_PSEUDO = new Set([':method', ':scheme', ':authority', ':path']);

/** The characters of a header name on the wire: RFC 9110 token characters, letters lowercase. */
const LOWERCASE_TOKEN: boolean[] = Array.from({ length: 128 }, (_, c) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c)));

/** A field name as Go canonicalizes it (keep-alive: Keep-Alive). */
const goCanonical = (name: string): string => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/**
 * Why a request's fields are not valid in HTTP/2 (RFC 9113 §8.2.2: connection-specific fields, a
 * TE other than "trailers"), in Go's words; undefined when they are.
 */
export function connectionSpecific(headers: Record<string, string>): string | undefined {
  // (CONNECTION_SPECIFIC is in the order Go looks for them)
  for (const name of CONNECTION_SPECIFIC) if (headers[name] !== undefined) return `request header "${goCanonical(name)}" is not valid in HTTP/2`;
  const te = headers.te;
  if (te !== undefined && te !== 'trailers' && te !== '') return 'request header "TE" may only be "trailers" in HTTP/2';
  return undefined;
}

/**
 * A request's header fields as Node's http2 presents them (pseudo-headers included, repeated
 * fields joined with ", ", cookies with "; "), or undefined when the request is malformed.
 */
export function requestHeaders(fields: Array<[string, string]>): Record<string, string> | undefined {
  const headers: Record<string, string> = Object.create(null);
  let regularSeen = false;
  for (let i = 0; i < fields.length; i++) {
    const [name, value] = fields[i];
    if (name.length === 0) return undefined;
    // Values hold no control characters but tab (Go's httpguts.ValidHeaderFieldValue): no CR, LF or NUL.
    for (let j = 0; j < value.length; j++) {
      const c = value.charCodeAt(j);
      if ((c < 0x20 && c !== 0x09) || c === 0x7f) return undefined;
    }
    if (name.charCodeAt(0) === 58 /* : */) {
      if (regularSeen || !REQUEST_PSEUDO.has(name) || headers[name] !== undefined) return undefined;
      headers[name] = value;
      continue;
    }
    regularSeen = true;
    // Names are lowercase tokens (RFC 9113 §8.2.1, RFC 9110 §5.6.2).
    for (let j = 0; j < name.length; j++) {
      const c = name.charCodeAt(j);
      if (c >= 128 || !LOWERCASE_TOKEN[c]) return undefined;
    }
    const prev = headers[name];
    headers[name] = prev === undefined ? value : prev + (name === 'cookie' ? '; ' : ', ') + value;
  }
  if (headers[':method'] === undefined || headers[':method'] === 'CONNECT' || headers[':scheme'] === undefined || !headers[':path']) return undefined;
  return headers;
}
