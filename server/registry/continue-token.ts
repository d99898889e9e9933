// Continue tokens are opaque to clients and tamper-checked: base64url(JSON) + an HMAC under a
// key kept in the data file, so a token survives restarts but a garbled one is refused (400).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors.ts';

export interface ContinuePosition {
  /** The resourceVersion every page of this list is served at. */
  rv: number;
  /** The last key returned; the next page starts after it. */
  ns: string;
  name: string;
}

let secret: Buffer = randomBytes(32);

export function setContinueSecret(key: Buffer): void {
  secret = key;
}

function mac(payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
}

export function encodeContinue(pos: ContinuePosition): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, rv: pos.rv, ns: pos.ns, n: pos.name })).toString('base64url');
  return `${payload}.${mac(payload).toString('base64url')}`;
}

export function decodeContinue(token: string): ContinuePosition {
  const bad = () => badRequest(`continue key is not valid: the token is malformed or was not issued by this server`);
  const dot = token.indexOf('.');
  if (dot <= 0) throw bad();
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const want = mac(payload);
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw bad();
  let parsed: any;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (parsed?.v !== 1 || !Number.isSafeInteger(parsed.rv) || typeof parsed.ns !== 'string' || typeof parsed.n !== 'string') throw bad();
  return { rv: parsed.rv, ns: parsed.ns, name: parsed.n };
}
