// kube's URL library (k8s.io/apiserver/pkg/cel/library/urls.go): url(), isURL() and the URL
// getters (getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery).
import { celFunc, celMethod } from '@bufbuild/cel';
import { goQuote } from '../../../go/strconv.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { BOOL, MAP, STRING } from './values.ts';

function parseURLValue(s: string): Map<string, any> {
  if (s.startsWith('/')) {
    const q = s.indexOf('?');
    return tagged('url', { scheme: '', host: '', hostname: '', port: '', path: q < 0 ? s : s.slice(0, q), query: q < 0 ? '' : s.slice(q + 1) });
  }
  let u: URL;
  try {
    if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) || /\s/.test(s)) throw new Error();
    u = new URL(s);
  } catch {
    throw new Error(`URL parse error during conversion from string: parse ${goQuote(s)}: invalid URI for request`);
  }
  const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return tagged('url', { scheme: u.protocol.slice(0, -1), host: u.host, hostname, port: u.port, path: u.pathname, query: u.search.replace(/^\?/, '') });
}
function isURLString(s: string): boolean {
  try {
    parseURLValue(s);
    return true;
  } catch {
    return false;
  }
}

export const URLS_LIBRARY = [
  celFunc('url', [STRING], MAP, (s: string) => parseURLValue(s)),
  celFunc('isURL', [STRING], BOOL, (s: string) => isURLString(s)),
  celMethod('getScheme', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getScheme').get('scheme');
  }),
  celMethod('getHost', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getHost').get('host');
  }),
  celMethod('getHostname', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getHostname').get('hostname');
  }),
  celMethod('getPort', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getPort').get('port');
  }),
  celMethod('getEscapedPath', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getEscapedPath').get('path');
  }),
  celMethod('getQuery', MAP, [], MAP, function () {
    const q = String(expectTag(this, 'url', 'getQuery').get('query'));
    const out = new Map<string, string[]>();
    for (const [k, v] of new URLSearchParams(q)) {
      const l = out.get(k) ?? [];
      l.push(v);
      out.set(k, l);
    }
    return out;
  }),
];
