// The server's PKI: a CA, a serving certificate and an admin client certificate kept as PEM
// files in DATA_DIR/pki/, created on first start and reused afterwards. Also issues client
// certificates and signs PKCS#10 requests with that CA (used by tests and CSR signing).
import { createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate as NodeX509 } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as tls from 'node:tls';
import type * as X509Module from '@peculiar/x509';

// @peculiar/x509 uses tsyringe, which refuses to load unless the Reflect metadata API exists
// (normally provided by the `reflect-metadata` package, which is not installed). Provide the
// three functions tsyringe calls, only if nothing else already did, before loading the library.
installReflectMetadata();

/** The @peculiar/x509 module, loaded after the Reflect shim and set up with Node's WebCrypto. Import it from here. */
export const x509: typeof X509Module = await import('@peculiar/x509');
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface ServerPki {
  caCertPem: string;
  caKeyPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
  dir: string;
}

export interface CaPair {
  caCertPem: string;
  caKeyPem: string;
}

export const CA_COMMON_NAME = 'hearth-ca';
export const SERVING_COMMON_NAME = 'hearth-apiserver';
export const ADMIN_USER = 'hearth-admin';
export const ADMIN_GROUP = 'system:masters';

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
/** Leaf certificates with less than this left are re-issued on start. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
/** Certificates start a little in the past to tolerate clock skew between machines. */
const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const EC_P256_SIGN = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

// ---------------------------------------------------------------------------------------------
// ensurePki

/**
 * Creates what is missing in DATA_DIR/pki/, reuses what exists. The serving certificate is
 * re-issued (from the same CA) when its SANs don't cover what is requested now, when it is not
 * signed by the CA, when its key doesn't match, or when it is about to expire; likewise the
 * admin certificate. A CA certificate without its key (or with a mismatched key) is an error.
 */
export async function ensurePki(dataDir: string, opts: { extraSans?: string[]; log?: (line: string) => void } = {}): Promise<ServerPki> {
  const log = opts.log ?? (() => {});
  const dir = path.join(dataDir, 'pki');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => path.join(dir, name);

  // CA
  let caCertPem = readIfExists(file('ca.crt'));
  let caKeyPem = readIfExists(file('ca.key'));
  if (caCertPem === undefined) {
    const ca = await createCa();
    caCertPem = ca.caCertPem;
    caKeyPem = ca.caKeyPem;
    writeFileAtomic(file('ca.key'), caKeyPem, 0o600);
    writeFileAtomic(file('ca.crt'), caCertPem, 0o644);
    log(`pki: generated a new cluster CA in ${file('ca.crt')}`);
  } else {
    if (caKeyPem === undefined) throw new Error(`pki: ${file('ca.crt')} exists but ${file('ca.key')} is missing`);
    if (!keyMatchesCert(caKeyPem, caCertPem)) throw new Error(`pki: ${file('ca.key')} does not match ${file('ca.crt')}`);
    tightenMode(file('ca.key'));
    log(`pki: loaded the cluster CA from ${file('ca.crt')}`);
  }
  const ca: CaPair = { caCertPem, caKeyPem: caKeyPem! };

  // Serving certificate
  const wantSans = servingSans(opts.extraSans ?? []);
  let servingCertPem = readIfExists(file('apiserver.crt'));
  let servingKeyPem = readIfExists(file('apiserver.key'));
  if (
    servingCertPem === undefined ||
    servingKeyPem === undefined ||
    !leafStillGood(servingCertPem, servingKeyPem, ca.caCertPem) ||
    !sansCover(servingCertPem, wantSans)
  ) {
    // Keep every SAN the old certificate had as well, so that a restart with fewer extras
    // does not take names away from clients that already use them.
    const sans = servingCertPem !== undefined ? mergeSans(wantSans, safeSans(servingCertPem)) : wantSans;
    const issued = await issueServingCertificate(ca, sans);
    log(`pki: issued the serving certificate ${file('apiserver.crt')} (${leafIssueReason(servingCertPem, servingKeyPem, ca.caCertPem, wantSans)})`);
    servingCertPem = issued.certPem;
    servingKeyPem = issued.keyPem;
    writeFileAtomic(file('apiserver.key'), servingKeyPem, 0o600);
    writeFileAtomic(file('apiserver.crt'), servingCertPem, 0o644);
  } else {
    tightenMode(file('apiserver.key'));
  }

  // Admin client certificate
  let adminCertPem = readIfExists(file('admin.crt'));
  let adminKeyPem = readIfExists(file('admin.key'));
  if (adminCertPem === undefined || adminKeyPem === undefined || !leafStillGood(adminCertPem, adminKeyPem, ca.caCertPem)) {
    const issued = await issueClientCertificate(ca, { commonName: ADMIN_USER, organizations: [ADMIN_GROUP] }, { days: LEAF_DAYS });
    log(`pki: issued the admin client certificate ${file('admin.crt')} (${leafIssueReason(adminCertPem, adminKeyPem, ca.caCertPem)})`);
    adminCertPem = issued.certPem;
    adminKeyPem = issued.keyPem!;
    writeFileAtomic(file('admin.key'), adminKeyPem, 0o600);
    writeFileAtomic(file('admin.crt'), adminCertPem, 0o644);
  } else {
    tightenMode(file('admin.key'));
  }

  return { caCertPem: ca.caCertPem, caKeyPem: ca.caKeyPem, servingCertPem, servingKeyPem, adminCertPem, adminKeyPem, dir };
}

/** Why a leaf certificate is (re)issued, for the log: a renewal names what made it one. */
function leafIssueReason(certPem: string | undefined, keyPem: string | undefined, caCertPem: string, wantSans?: San[]): string {
  if (certPem === undefined || keyPem === undefined) return 'none yet';
  if (!leafStillGood(certPem, keyPem, caCertPem)) return 'renewed: expiring, not signed by the CA, or not matching its key';
  if (wantSans && !sansCover(certPem, wantSans)) return 'renewed: new subject alternative names';
  return 'renewed';
}

async function createCa(): Promise<CaPair> {
  const keys = await generateKeyPair();
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [CA_COMMON_NAME] }],
    keys,
    serialNumber: randomSerial(),
    notBefore,
    notAfter: new Date(notBefore.getTime() + CA_DAYS * DAY_MS),
    signingAlgorithm: EC_P256_SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { caCertPem: cert.toString('pem') + '\n', caKeyPem: await exportPrivateKeyPem(keys.privateKey) };
}

async function issueServingCertificate(ca: CaPair, sans: San[]): Promise<{ certPem: string; keyPem: string }> {
  const keys = await generateKeyPair();
  const certPem = await issue(ca, {
    subject: [{ CN: [SERVING_COMMON_NAME] }],
    publicKey: keys.publicKey,
    days: LEAF_DAYS,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(sans.map((s) => ({ type: s.type, value: s.value }))),
    ],
  });
  return { certPem, keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

// ---------------------------------------------------------------------------------------------
// Issuing

/**
 * Issue a client certificate signed by the CA: CN = user, one O attribute per group, clientAuth
 * EKU, digitalSignature key usage, valid for `days` (default 365, capped at the CA's expiry).
 * With `publicKeyPem` (SPKI PEM) the certificate is for that key and no key is returned;
 * otherwise a fresh P-256 key is generated and returned as PKCS#8 PEM.
 */
export async function issueClientCertificate(
  pki: CaPair,
  subject: { commonName: string; organizations?: string[] },
  opts: { days?: number; publicKeyPem?: string } = {},
): Promise<{ certPem: string; keyPem: string | undefined }> {
  if (!subject.commonName) throw new Error('pki: client certificate needs a common name');
  let publicKey: CryptoKey | X509Module.PublicKey;
  let keyPem: string | undefined;
  if (opts.publicKeyPem !== undefined) {
    publicKey = new x509.PublicKey(opts.publicKeyPem);
  } else {
    const keys = await generateKeyPair();
    publicKey = keys.publicKey;
    keyPem = await exportPrivateKeyPem(keys.privateKey);
  }
  const name: X509Module.JsonName = [{ CN: [subject.commonName] }];
  for (const org of subject.organizations ?? []) name.push({ O: [org] });
  const certPem = await issue(pki, {
    subject: name,
    publicKey,
    days: opts.days ?? LEAF_DAYS,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ],
  });
  return { certPem, keyPem };
}

/** Key usages (KeyUsage bits) by their Kubernetes certificates.k8s.io names. */
const KEY_USAGE_BY_NAME: Record<string, number> = {
  signing: 1, // digitalSignature
  'digital signature': 1,
  'content commitment': 2,
  'key encipherment': 4,
  'data encipherment': 8,
  'key agreement': 16,
  'cert sign': 32,
  'crl sign': 64,
  'encipher only': 128,
  'decipher only': 256,
};

/** Extended key usage OIDs by their Kubernetes certificates.k8s.io names. */
const EXT_KEY_USAGE_BY_NAME: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage name signCertificateRequest understands (the certificates.k8s.io KeyUsage values). */
export const CERTIFICATE_USAGES: readonly string[] = Object.freeze([
  ...Object.keys(KEY_USAGE_BY_NAME),
  ...Object.keys(EXT_KEY_USAGE_BY_NAME),
]);

/**
 * Sign a PKCS#10 CSR (PEM) with the CA. The CSR's self-signature must verify. The certificate
 * takes the CSR's subject, public key and subjectAltName (if requested); key usages and extended
 * key usages come from `usages` (Kubernetes names such as "digital signature", "client auth").
 * Validity is `days` (default 365), capped at the CA's expiry. Returns the certificate PEM.
 */
export async function signCertificateRequest(
  pki: CaPair,
  csrPem: string,
  opts: { usages: string[]; days?: number; isCA?: boolean; ttlMs?: number },
): Promise<string> {
  let csr: X509Module.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (err) {
    throw new Error(`pki: cannot parse certificate request: ${(err as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error('pki: certificate request signature does not verify');

  let keyUsage = 0;
  const extUsages: string[] = [];
  for (const usage of opts.usages) {
    const u = usage.toLowerCase();
    if (u in KEY_USAGE_BY_NAME) keyUsage |= KEY_USAGE_BY_NAME[u]!;
    else if (u in EXT_KEY_USAGE_BY_NAME) {
      const oid = EXT_KEY_USAGE_BY_NAME[u]!;
      if (!extUsages.includes(oid)) extUsages.push(oid);
    } else throw new Error(`pki: unknown certificate usage ${JSON.stringify(usage)}`);
  }

  const extensions: X509Module.Extension[] = [new x509.BasicConstraintsExtension(opts.isCA === true, undefined, true)];
  if (keyUsage !== 0) extensions.push(new x509.KeyUsagesExtension(keyUsage, true));
  if (extUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extUsages));
  const requestedSan = csr.getExtension('2.5.29.17'); // subjectAltName, copied as requested
  if (requestedSan) extensions.push(new x509.SubjectAlternativeNameExtension(requestedSan.rawData));

  return issue(pki, { subject: csr.subjectName, publicKey: csr.publicKey, days: opts.days ?? LEAF_DAYS, ttlMs: opts.ttlMs, extensions });
}

/** kube's signer: certificates shorter than this are not backdated at their end (PermissiveSigningPolicy's Short). */
const SHORT_LIVED_MS = 8 * 3600 * 1000;

/** Common signing path: adds SKI/AKI, backdates, caps validity at the CA's notAfter. */
async function issue(
  pki: CaPair,
  req: {
    subject: X509Module.JsonName | X509Module.Name;
    publicKey: CryptoKey | X509Module.PublicKey;
    days: number;
    /** kube's PermissiveSigningPolicy instead of days: valid from 5 minutes ago until ttl from now (less the 5 minutes when not short-lived). */
    ttlMs?: number;
    extensions: X509Module.Extension[];
  },
): Promise<string> {
  if (!(req.days > 0)) throw new Error(`pki: validity must be a positive number of days, got ${req.days}`);
  const caCert = new x509.X509Certificate(pki.caCertPem);
  const { key: signingKey, algorithm } = await importSigningKey(pki.caKeyPem);
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  let notAfter = new Date(Date.now() + req.days * DAY_MS);
  if (req.ttlMs !== undefined) notAfter = new Date(Date.now() + req.ttlMs - (req.ttlMs < SHORT_LIVED_MS ? 0 : BACKDATE_MS));
  if (notAfter > caCert.notAfter) notAfter = caCert.notAfter;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: req.subject,
    issuer: caCert.subjectName,
    notBefore,
    notAfter,
    publicKey: req.publicKey,
    signingKey,
    signingAlgorithm: algorithm,
    extensions: [
      ...req.extensions,
      await x509.SubjectKeyIdentifierExtension.create(req.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  return cert.toString('pem') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Authentication helper

type PeerSubject = Readonly<Record<string, string | string[] | undefined>> | tls.Certificate;

/**
 * The user a verified client certificate names, from Node's TLSSocket.getPeerCertificate():
 * name = CN (the last one if there are several, as Go's crypto/x509 does), groups = every O.
 * Returns undefined when there is no certificate or no CN. It does not check that the
 * certificate was verified; the caller must check socket.authorized.
 */
export function userFromPeerCertificate(
  cert: { subject?: PeerSubject } | null | undefined,
): { name: string; groups: string[] } | undefined {
  const subject = cert?.subject as Readonly<Record<string, string | string[] | undefined>> | undefined;
  if (!subject) return undefined;
  const cn = subject['CN'];
  const name = Array.isArray(cn) ? cn[cn.length - 1] : cn;
  if (typeof name !== 'string' || name === '') return undefined;
  const o = subject['O'];
  const groups = o === undefined ? [] : Array.isArray(o) ? o.filter((g) => typeof g === 'string') : [o];
  return { name, groups };
}

// ---------------------------------------------------------------------------------------------
// Subject alternative names

interface San {
  type: 'dns' | 'ip';
  value: string;
}

function servingSans(extra: string[]): San[] {
  const names = ['localhost'];
  const host = os.hostname().trim().toLowerCase();
  if (host) names.push(host);
  names.push('kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local');
  names.push('127.0.0.1', '::1');
  const out: San[] = [];
  for (const n of [...names, ...extra]) {
    const san = parseSan(n);
    if (san && !out.some((s) => sanEqual(s, san))) out.push(san);
  }
  return out;
}

/** "1.2.3.4", "::1", "[::1]", "IP:1.2.3.4", "DNS:example.com", "example.com"; wildcard/unspecified addresses are dropped. */
function parseSan(raw: string): San | undefined {
  let s = raw.trim();
  let forced: 'dns' | 'ip' | undefined;
  const prefix = /^(dns|ip):/i.exec(s);
  if (prefix) {
    forced = prefix[1]!.toLowerCase() as 'dns' | 'ip';
    s = s.slice(prefix[0].length).trim();
  }
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (s === '') return undefined;
  if (net.isIP(s) !== 0 && forced !== 'dns') {
    const ip = canonicalIp(s);
    if (ip === '0.0.0.0' || ip === '::') return undefined;
    return { type: 'ip', value: ip };
  }
  if (forced === 'ip') throw new Error(`pki: ${JSON.stringify(raw)} is not an IP address`);
  return { type: 'dns', value: s.toLowerCase() };
}

function canonicalIp(ip: string): string {
  const bare = ip.replace(/%.*$/, '');
  if (net.isIPv6(bare)) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  return bare;
}

function sanEqual(a: San, b: San): boolean {
  return a.type === b.type && (a.type === 'ip' ? canonicalIp(a.value) === canonicalIp(b.value) : a.value.toLowerCase() === b.value.toLowerCase());
}

function certSans(certPem: string): San[] {
  const ext = new x509.X509Certificate(certPem).getExtension(x509.SubjectAlternativeNameExtension);
  const out: San[] = [];
  for (const n of ext?.names.toJSON() ?? []) {
    if (n.type === 'dns') out.push({ type: 'dns', value: n.value.toLowerCase() });
    else if (n.type === 'ip') out.push({ type: 'ip', value: canonicalIp(n.value) });
  }
  return out;
}

function safeSans(certPem: string): San[] {
  try {
    return certSans(certPem);
  } catch {
    return [];
  }
}

function sansCover(certPem: string, want: San[]): boolean {
  const have = certSans(certPem);
  return want.every((w) => have.some((h) => sanEqual(h, w)));
}

function mergeSans(a: San[], b: San[]): San[] {
  const out = [...a];
  for (const s of b) if (!out.some((o) => sanEqual(o, s))) out.push(s);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Keys, files, checks

async function generateKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

const signingKeyCache = new Map<string, Promise<{ key: CryptoKey; algorithm: Algorithm & { hash: string } }>>();

/** Import a PEM private key (PKCS#8 or SEC1/PKCS#1; EC P-256/384/521 or RSA) for signing with WebCrypto. */
function importSigningKey(pem: string): Promise<{ key: CryptoKey; algorithm: Algorithm & { hash: string } }> {
  let cached = signingKeyCache.get(pem);
  if (!cached) {
    cached = (async () => {
      const ko = createPrivateKey(pem);
      const der = ko.export({ type: 'pkcs8', format: 'der' });
      let importAlg: webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams;
      let algorithm: Algorithm & { hash: string };
      if (ko.asymmetricKeyType === 'ec') {
        const curve = ko.asymmetricKeyDetails?.namedCurve;
        const map: Record<string, [string, string]> = {
          prime256v1: ['P-256', 'SHA-256'],
          secp384r1: ['P-384', 'SHA-384'],
          secp521r1: ['P-521', 'SHA-512'],
        };
        const m = curve ? map[curve] : undefined;
        if (!m) throw new Error(`pki: unsupported EC curve ${curve}`);
        importAlg = { name: 'ECDSA', namedCurve: m[0] };
        algorithm = { name: 'ECDSA', hash: m[1] };
      } else if (ko.asymmetricKeyType === 'rsa') {
        importAlg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
        algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      } else {
        throw new Error(`pki: unsupported CA key type ${ko.asymmetricKeyType}`);
      }
      const key = (await webcrypto.subtle.importKey('pkcs8', der, importAlg, false, ['sign'])) as unknown as CryptoKey;
      return { key, algorithm };
    })();
    cached.catch(() => signingKeyCache.delete(pem));
    signingKeyCache.set(pem, cached);
  }
  return cached;
}

function keyMatchesCert(keyPem: string, certPem: string): boolean {
  try {
    const fromKey = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    const fromCert = new NodeX509(certPem).publicKey.export({ type: 'spki', format: 'der' });
    return Buffer.compare(fromKey, fromCert) === 0;
  } catch {
    return false;
  }
}

/** The leaf parses, matches its key, was signed by the CA and has more than RENEW_BEFORE left. */
function leafStillGood(certPem: string, keyPem: string, caCertPem: string): boolean {
  try {
    const cert = new NodeX509(certPem);
    const ca = new NodeX509(caCertPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    if (!keyMatchesCert(keyPem, certPem)) return false;
    const now = Date.now();
    if (new Date(cert.validFrom).getTime() > now + BACKDATE_MS) return false;
    return new Date(cert.validTo).getTime() - now > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01; // positive and exactly 16 bytes
  return b.toString('hex');
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function writeFileAtomic(file: string, content: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(tmp, content, { mode });
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function tightenMode(file: string): void {
  try {
    if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  } catch {
    // best effort
  }
}

// ---------------------------------------------------------------------------------------------

function installReflectMetadata(): void {
  const R = Reflect as unknown as Record<string, unknown>;
  if (typeof R['getMetadata'] === 'function' && typeof R['defineMetadata'] === 'function') return;
  const store = new WeakMap<object, Map<unknown, Map<unknown, unknown>>>();
  const table = (target: object, prop: unknown, create: boolean): Map<unknown, unknown> | undefined => {
    let byProp = store.get(target);
    if (!byProp) {
      if (!create) return undefined;
      byProp = new Map();
      store.set(target, byProp);
    }
    let t = byProp.get(prop);
    if (!t && create) {
      t = new Map();
      byProp.set(prop, t);
    }
    return t;
  };
  R['defineMetadata'] = (key: unknown, value: unknown, target: object, prop?: unknown): void => {
    table(target, prop, true)!.set(key, value);
  };
  R['getOwnMetadata'] = (key: unknown, target: object, prop?: unknown): unknown => table(target, prop, false)?.get(key);
  R['hasOwnMetadata'] = (key: unknown, target: object, prop?: unknown): boolean => table(target, prop, false)?.has(key) ?? false;
  R['getMetadata'] = (key: unknown, target: object, prop?: unknown): unknown => {
    for (let o: object | null = target; o; o = Object.getPrototypeOf(o) as object | null) {
      const t = table(o, prop, false);
      if (t?.has(key)) return t.get(key);
    }
    return undefined;
  };
  R['hasMetadata'] = (key: unknown, target: object, prop?: unknown): boolean => {
    for (let o: object | null = target; o; o = Object.getPrototypeOf(o) as object | null) {
      if (table(o, prop, false)?.has(key)) return true;
    }
    return false;
  };
}
