// The keys that sign and verify service-account tokens, as kube-apiserver reads them from
// --service-account-signing-key-file (one private key: it signs) and --service-account-key-file
// (repeatable; PEM files of public or private keys, several blocks each: they verify, which is how
// keys rotate). Without a signing key file hearth uses DATA_DIR/pki/sa.key, an RSA 2048 key
// generated at first start as kubeadm generates its sa.key (with sa.pub beside it); backups and
// restores carry it with the rest of pki/. Key IDs and algorithms follow kube's
// pkg/serviceaccount/jwt.go (kid: the unpadded base64url SHA-256 of the key's PKIX DER; RSA
// signs RS256, ECDSA by its curve).
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServiceAccountKey {
  kid: string;
  alg: 'RS256' | 'ES256' | 'ES384' | 'ES512';
  publicKey: KeyObject;
}

export interface ServiceAccountSigningKey extends ServiceAccountKey {
  privateKey: KeyObject;
}

export interface ServiceAccountKeys {
  signing: ServiceAccountSigningKey;
  /** Every key a token may be signed with (the signing key's among them). */
  verifying: ServiceAccountKey[];
}

export const SA_KEY_FILE = 'sa.key';
export const SA_PUBLIC_KEY_FILE = 'sa.pub';

/**
 * The signing key (the file given, else DATA_DIR/pki/sa.key, generated when missing) and the
 * verification keys (the key files given, else the signing key's public key). The signing key
 * always verifies too, so tokens hearth issues authenticate whatever the key files hold.
 */
export function loadServiceAccountKeys(dataDir: string, opts: { signingKeyFile?: string; keyFiles?: readonly string[] } = {}): ServiceAccountKeys {
  const signingFile = opts.signingKeyFile ?? ensureGeneratedKey(path.join(dataDir, 'pki'));
  const privateKeys = readPemKeys(signingFile).filter((k) => k.type === 'private');
  if (privateKeys.length === 0) throw new Error(`service account signing key ${signingFile}: no private key found`);
  const signingPrivate = privateKeys[0]!;
  const signing: ServiceAccountSigningKey = { ...describe(createPublicKey(signingPrivate), signingFile), privateKey: signingPrivate };
  const verifying: ServiceAccountKey[] = [];
  for (const file of opts.keyFiles ?? []) {
    const keys = readPemKeys(file);
    if (keys.length === 0) throw new Error(`service account key file ${file}: no key found`);
    for (const k of keys) verifying.push(describe(k.type === 'private' ? createPublicKey(k) : k, file));
  }
  if (!verifying.some((k) => k.kid === signing.kid)) verifying.push({ kid: signing.kid, alg: signing.alg, publicKey: signing.publicKey });
  return { signing, verifying };
}

/** DATA_DIR/pki/sa.key (and sa.pub): kept when present, else an RSA 2048 key written once. */
function ensureGeneratedKey(pkiDir: string): string {
  const keyFile = path.join(pkiDir, SA_KEY_FILE);
  if (existsSync(keyFile)) return keyFile;
  mkdirSync(pkiDir, { recursive: true, mode: 0o700 });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(path.join(pkiDir, SA_PUBLIC_KEY_FILE), publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644 });
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return keyFile;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Every key of a PEM file (RSA, EC and PKCS#8 private keys, PKIX public keys, certificates' keys). */
function readPemKeys(file: string): KeyObject[] {
  const text = readFileSync(file, 'utf8');
  const keys: KeyObject[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    const label = m[1]!;
    const block = m[0];
    if (label === 'EC PARAMETERS') continue;
    try {
      keys.push(label.includes('PRIVATE KEY') ? createPrivateKey(block) : createPublicKey(block));
    } catch (e) {
      throw new Error(`service account key file ${file}: cannot read its ${label}: ${(e as Error).message}`);
    }
  }
  return keys;
}

function describe(publicKey: KeyObject, file: string): ServiceAccountKey {
  return { kid: keyIdOf(publicKey), alg: algorithmOf(publicKey, file), publicKey };
}

/** kube's keyIDFromPublicKey: base64url (no padding) of the SHA-256 of the PKIX DER. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

function algorithmOf(key: KeyObject, file: string): ServiceAccountKey['alg'] {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
    throw new Error(`service account key file ${file}: unknown private key curve, must be 256, 384, or 521`);
  }
  throw new Error(`service account key file ${file}: unknown key type ${key.asymmetricKeyType}, must be RSA or ECDSA`);
}
