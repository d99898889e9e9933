// --client-ca-file: a PEM bundle of CAs whose client certificates hearth trusts besides its own CA's
// (kube's ClientCertAuthenticationOptions, loaded by dynamiccertificates.NewDynamicCAContentFromFile
// with the purpose "client-ca-bundle"). Read once at start; a missing, empty or certificate-less
// file refuses the start with kube's message.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * The bundle's certificates as PEM text, checked to parse, or kube's error. `purpose` names the
 * bundle in those errors as kube does: "client-ca-bundle", or "request-header" for
 * --requestheader-client-ca-file.
 */
export function readClientCaFile(path: string, purpose = 'client-ca-bundle'): string {
  const name = `${purpose}::${path}`;
  let bundle: Buffer;
  try {
    bundle = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new Error(`read ${path}: is a directory`);
    throw new Error(`open ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message}`);
  }
  if (bundle.length === 0) throw new Error(`missing content for CA bundle "${name}"`);
  const blocks = bundle.toString('latin1').match(PEM_CERTIFICATE) ?? [];
  const certificates: string[] = [];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
      certificates.push(block);
    } catch {
      // kube's cert.ParseCertsPEM refuses the bundle for one bad block; so does this.
      throw new Error(`error reading ${name}: x509: malformed certificate`);
    }
  }
  if (certificates.length === 0) throw new Error(`error reading ${name}: data does not contain any valid RSA or ECDSA certificates`);
  return certificates.join('\n') + '\n';
}
