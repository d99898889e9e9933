// PKCS#10 certificate requests and PEM certificates as kube-apiserver checks them when a
// CertificateSigningRequest is written: certificates.ParseCSR (the first PEM block must be a
// CERTIFICATE REQUEST), Go's x509.ParseCertificateRequest and CertificateRequest.CheckSignature,
// with Go's error texts; validation's validateCertificate for status.certificate; and the
// subject's organizations (CertificateSubjectRestriction reads them). The DER is walked here (a
// few bounded TLV reads) and the signature checked with node:crypto, synchronously, so a strategy
// or an admission plugin can call it; @peculiar/x509 (loaded through pki/) is left to the signer.
import { goQuote } from '../go/strconv.ts';
import { constants, createPublicKey, verify, X509Certificate, type KeyObject } from 'node:crypto';

/** One PEM block (encoding/pem's Block): its type, whether it had headers, and its bytes. */
export interface PemBlock {
  type: string;
  hasHeaders: boolean;
  bytes: Buffer;
}

const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The PEM blocks of data in order, as repeated pem.Decode calls find them: a block whose
 * body is not base64 or whose END line does not match is skipped, as Go skips it.
 */
export function pemBlocks(data: string): PemBlock[] {
  const out: PemBlock[] = [];
  const begin = /(?:^|\n)-----BEGIN ([^\r\n]*)-----[ \t\r]*\n/g;
  for (let m = begin.exec(data); m; m = begin.exec(data)) {
    const type = m[1]!;
    const endLine = `\n-----END ${type}-----`;
    const bodyStart = m.index + m[0].length;
    const endAt = data.indexOf(endLine, bodyStart - 1);
    if (endAt < 0) continue;
    let body = data.slice(bodyStart, endAt + 1);
    let hasHeaders = false;
    // Headers ("Key: value" lines) end at a blank line, as pem.Decode reads them.
    const firstLine = body.slice(0, body.indexOf('\n') + 1);
    if (firstLine.includes(':')) {
      const blank = body.search(/\r?\n\r?\n/);
      if (blank < 0) continue;
      hasHeaders = true;
      body = body.slice(blank).replace(/^\r?\n\r?\n/, '');
    }
    const b64 = body.replace(/[ \t\r\n]/g, '');
    if (b64.length % 4 !== 0 || !BASE64_BODY.test(b64)) continue;
    out.push({ type, hasHeaders, bytes: Buffer.from(b64, 'base64') });
    begin.lastIndex = endAt + endLine.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// DER

interface Tlv {
  tag: number;
  start: number;
  contentStart: number;
  end: number;
}

class Asn1Error extends Error {}

function readTlv(buf: Buffer, at: number, limit: number): Tlv {
  if (at + 2 > limit) throw new Asn1Error('asn1: syntax error: data truncated');
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new Asn1Error('asn1: syntax error: tag number too large');
  let len = buf[at + 1]!;
  let p = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Asn1Error('asn1: syntax error: length too large');
    if (p + n > limit) throw new Asn1Error('asn1: syntax error: data truncated');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i]!;
    p += n;
  }
  if (p + len > limit) throw new Asn1Error('asn1: syntax error: data truncated');
  return { tag, start: at, contentStart: p, end: p + len };
}

function expect(buf: Buffer, at: number, limit: number, tag: number, what: string): Tlv {
  const t = readTlv(buf, at, limit);
  if (t.tag !== tag) throw new Asn1Error(`asn1: structure error: tags don't match (${tag & 0x1f} vs tag ${t.tag & 0x1f}) ${what}`);
  return t;
}

function oidText(bytes: Buffer): string {
  if (bytes.length === 0) return '';
  const parts: number[] = [Math.floor(Math.min(bytes[0]!, 80) / 40), bytes[0]! - Math.floor(Math.min(bytes[0]!, 80) / 40) * 40];
  let v = 0;
  for (let i = 1; i < bytes.length; i++) {
    v = v * 128 + (bytes[i]! & 0x7f);
    if (!(bytes[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** The parts of a certificate request a signature check needs (Go's certificateRequest). */
export interface CertificateRequestParts {
  /** The raw certificationRequestInfo, the signed bytes. */
  tbs: Buffer;
  signatureAlgorithm: string;
  signature: Buffer;
  /** The raw SubjectPublicKeyInfo. */
  publicKeyInfo: Buffer;
  /** The subject's organization (O) values, in order. */
  organizations: string[];
  /** The subject's common name (CN): its last value, as Go's pkix.Name keeps it; '' when none. */
  commonName: string;
}

const ORGANIZATION_OID = '2.5.4.10';
const COMMON_NAME_OID = '2.5.4.3';
/** The string types pkix names hold (UTF8String, PrintableString, T61String, IA5String, BMPString). */
const NAME_STRING_TAGS = new Set([0x0c, 0x13, 0x14, 0x16, 0x1e]);

/** The string values of one attribute type in a Name (SEQUENCE OF SET OF AttributeTypeAndValue). */
function nameValues(der: Buffer, name: Tlv, attributeOid: string): string[] {
  const out: string[] = [];
  for (let at = name.contentStart; at < name.end; ) {
    const rdn = expect(der, at, name.end, 0x31, 'pkix.RDNSequence');
    for (let a = rdn.contentStart; a < rdn.end; ) {
      const atv = expect(der, a, rdn.end, 0x30, 'pkix.AttributeTypeAndValue');
      const oid = expect(der, atv.contentStart, atv.end, 0x06, 'pkix.AttributeTypeAndValue.Type');
      const value = readTlv(der, oid.end, atv.end);
      if (oidText(der.subarray(oid.contentStart, oid.end)) === attributeOid && NAME_STRING_TAGS.has(value.tag)) {
        const bytes = der.subarray(value.contentStart, value.end);
        out.push(value.tag === 0x1e ? Buffer.from(bytes).swap16().toString('utf16le') : value.tag === 0x0c ? bytes.toString('utf8') : bytes.toString('latin1'));
      }
      a = atv.end;
    }
    at = rdn.end;
  }
  return out;
}

/** Go's x509.ParseCertificateRequest, as far as a signature check needs: the error text, or the parts. */
export function parseCertificateRequest(der: Buffer): CertificateRequestParts | string {
  try {
    const outer = expect(der, 0, der.length, 0x30, 'certificateRequest');
    if (outer.end !== der.length) return 'asn1: syntax error: trailing data';
    const tbs = expect(der, outer.contentStart, outer.end, 0x30, 'certificateRequest.TBSCSR');
    const algId = expect(der, tbs.end, outer.end, 0x30, 'certificateRequest.SignatureAlgorithm');
    const oid = expect(der, algId.contentStart, algId.end, 0x06, 'certificateRequest.SignatureAlgorithm.Algorithm');
    const sig = expect(der, algId.end, outer.end, 0x03, 'certificateRequest.SignatureValue');
    // certificationRequestInfo: version, subject, subjectPKInfo, [0] attributes
    const version = expect(der, tbs.contentStart, tbs.end, 0x02, 'certificateRequest.TBSCSR.Version');
    const subject = expect(der, version.end, tbs.end, 0x30, 'certificateRequest.TBSCSR.Subject');
    const spki = expect(der, subject.end, tbs.end, 0x30, 'certificateRequest.TBSCSR.PublicKey');
    if (sig.end - sig.contentStart < 1) return 'asn1: syntax error: zero length BIT STRING';
    return {
      tbs: der.subarray(tbs.start, tbs.end),
      signatureAlgorithm: oidText(der.subarray(oid.contentStart, oid.end)),
      signature: der.subarray(sig.contentStart + 1, sig.end),
      publicKeyInfo: der.subarray(spki.start, spki.end),
      organizations: nameValues(der, subject, ORGANIZATION_OID),
      commonName: nameValues(der, subject, COMMON_NAME_OID).at(-1) ?? '',
    };
  } catch (err) {
    if (err instanceof Asn1Error) return err.message;
    throw err;
  }
}

type KeyFamily = 'RSA' | 'ECDSA' | 'Ed25519';

/** Go's signature algorithms a certificate request may name, by OID. */
const SIGNATURE_ALGORITHMS: Record<string, { name: string; family: KeyFamily; hash: string | null; pss?: boolean; insecure?: boolean }> = {
  '1.2.840.113549.1.1.4': { name: 'MD5-RSA', family: 'RSA', hash: 'md5', insecure: true },
  '1.2.840.113549.1.1.5': { name: 'SHA1-RSA', family: 'RSA', hash: 'sha1' },
  '1.2.840.113549.1.1.11': { name: 'SHA256-RSA', family: 'RSA', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { name: 'SHA384-RSA', family: 'RSA', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { name: 'SHA512-RSA', family: 'RSA', hash: 'sha512' },
  '1.2.840.113549.1.1.10': { name: 'RSASSA-PSS', family: 'RSA', hash: null, pss: true },
  '1.2.840.10045.4.1': { name: 'ECDSA-SHA1', family: 'ECDSA', hash: 'sha1' },
  '1.2.840.10045.4.3.2': { name: 'ECDSA-SHA256', family: 'ECDSA', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { name: 'ECDSA-SHA384', family: 'ECDSA', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { name: 'ECDSA-SHA512', family: 'ECDSA', hash: 'sha512' },
  '1.3.101.112': { name: 'Ed25519', family: 'Ed25519', hash: null },
};

/** Go's %T of a parsed public key. */
function goKeyType(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return '*rsa.PublicKey';
    case 'ec':
      return '*ecdsa.PublicKey';
    case 'ed25519':
      return 'ed25519.PublicKey';
    default:
      return '<nil>';
  }
}

const FAMILY_OF_TYPE: Record<string, KeyFamily> = { rsa: 'RSA', 'rsa-pss': 'RSA', ec: 'ECDSA', ed25519: 'Ed25519' };

/** CertificateRequest.CheckSignature: undefined when the request's self-signature verifies, else Go's error text. */
export function checkRequestSignature(parts: CertificateRequestParts): string | undefined {
  let key: KeyObject | undefined;
  try {
    key = createPublicKey({ key: parts.publicKeyInfo, format: 'der', type: 'spki' });
  } catch {
    key = undefined; // an algorithm Go does not know parses to no key at all
  }
  const alg = SIGNATURE_ALGORITHMS[parts.signatureAlgorithm];
  if (!alg || !key || !FAMILY_OF_TYPE[key.asymmetricKeyType ?? '']) return 'x509: cannot verify signature: algorithm unimplemented';
  if (alg.insecure) return `x509: cannot verify signature: insecure algorithm ${alg.name}`;
  if (FAMILY_OF_TYPE[key.asymmetricKeyType!] !== alg.family) {
    return `x509: signature algorithm specifies an ${alg.family} public key, but have public key of type ${goKeyType(key)}`;
  }
  const failure = alg.family === 'RSA' ? 'crypto/rsa: verification error' : `x509: ${alg.family} verification failure`;
  try {
    if (alg.pss) {
      // The hash is in the parameters; a signature verifies under its own hash only.
      const ok = ['sha256', 'sha384', 'sha512'].some((h) =>
        verify(h, parts.tbs, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, parts.signature),
      );
      return ok ? undefined : failure;
    }
    return verify(alg.hash, parts.tbs, key, parts.signature) ? undefined : failure;
  } catch {
    return failure;
  }
}

/** certificates.ParseCSR: the request in a PEM's first block, or the error text. */
export function parseCsr(request: Buffer): CertificateRequestParts | string {
  const block = pemBlocks(request.toString('latin1'))[0];
  if (!block || block.type !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  return parseCertificateRequest(block.bytes);
}

/** certificates.ParseCSR and CheckSignature on a request's bytes: undefined when it is a good request, else kube's error text. */
export function certificateRequestError(request: Buffer): string | undefined {
  const parts = parseCsr(request);
  if (typeof parts === 'string') return parts;
  return checkRequestSignature(parts);
}

/** validation's validateCertificate: status.certificate holds only CERTIFICATE blocks, each a certificate. */
export function certificateError(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined;
  const blocks = pemBlocks(pem.toString('latin1'));
  for (const block of blocks) {
    if (block.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${goQuote(block.type)}`;
    if (block.hasHeaders) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(block.bytes);
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return blocks.length === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}
