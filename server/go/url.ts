// Go's net/url as kube's CEL format library meets it: url.ParseRequestURI's checks and their
// error texts (escapes, host names, ports, user info).
import { goQuote } from './strconv.ts';

/** Go's net/url shouldEscape, for the ASCII bytes parsing checks. */
function urlShouldEscape(c: string, mode: 'path' | 'host' | 'zone' | 'user'): boolean {
  if (/[a-zA-Z0-9]/.test(c)) return false;
  if ((mode === 'host' || mode === 'zone') && "!$&'()*+,;=:[]<>\"".includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) return mode === 'path' ? c === '?' : mode === 'user' ? '@/?:'.includes(c) : true;
  return true;
}
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
/** Go's url.unescape validation: the error text, or undefined. */
function urlUnescapeError(s: string, mode: 'path' | 'host' | 'zone' | 'user'): string | undefined {
  for (let i = 0; i < s.length; ) {
    const c = s[i];
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
      const seq = s.slice(i, i + 3);
      if (mode === 'host' && parseInt(s[i + 1], 16) < 8 && seq !== '%25') return `invalid URL escape ${goQuote(seq)}`;
      if (mode === 'zone') {
        const v = String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
        if (seq !== '%25' && v !== ' ' && urlShouldEscape(v, 'host')) return `invalid URL escape ${goQuote(seq)}`;
      }
      i += 3;
      continue;
    }
    if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && urlShouldEscape(c, mode)) return `invalid character ${goQuote(c)} in host name`;
    i++;
  }
  return undefined;
}
const validOptionalPort = (p: string) => p === '' || /^:[0-9]*$/.test(p);
function urlHostError(host: string): string | undefined {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) return "missing ']' in host";
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) return `invalid port ${goQuote(colonPort)} after host`;
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0) return urlUnescapeError(host.slice(0, zone), 'host') ?? urlUnescapeError(host.slice(zone, i), 'zone') ?? urlUnescapeError(host.slice(i), 'host');
  } else {
    const i = host.lastIndexOf(':');
    if (i >= 0 && !validOptionalPort(host.slice(i))) return `invalid port ${goQuote(host.slice(i))} after host`;
  }
  return urlUnescapeError(host, 'host');
}
/** Go's url.ParseRequestURI, as format.uri() uses it: the error text, or undefined when it parses. */
export function parseRequestURIError(raw: string): string | undefined {
  const fail = (m: string) => `parse ${goQuote(raw)}: ${m}`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) return fail('net/url: invalid control character in URL');
  if (raw === '') return fail('empty url');
  if (raw === '*') return undefined;
  let scheme = '';
  let rest = raw;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c) && i > 0) continue;
    if (c === ':') {
      if (i === 0) return fail('missing protocol scheme');
      scheme = raw.slice(0, i);
      rest = raw.slice(i + 1);
    }
    break;
  }
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) rest = rest.slice(0, -1);
  else if (rest.includes('?')) rest = rest.slice(0, rest.indexOf('?'));
  if (!rest.startsWith('/')) return scheme !== '' ? undefined : fail('invalid URI for request');
  if (scheme !== '' && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    const at = authority.lastIndexOf('@');
    const hostErr = urlHostError(at < 0 ? authority : authority.slice(at + 1));
    if (hostErr) return fail(hostErr);
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[a-zA-Z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return fail('net/url: invalid userinfo');
      const colon = userinfo.indexOf(':');
      const ue = (colon < 0 ? [userinfo] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)]).map((x) => urlUnescapeError(x, 'user')).find((x) => x);
      if (ue) return fail(ue);
    }
  }
  const pe = urlUnescapeError(rest, 'path');
  return pe ? fail(pe) : undefined;
}
