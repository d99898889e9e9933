// Static bearer tokens from --token-auth-file, as kube's tokenfile authenticator reads them
// (k8s.io/apiserver/pkg/authentication/token/tokenfile): a CSV file of `token,user,uid` with an
// optional fourth column of comma-separated groups (quoted, `"group1,group2"`). The file is read
// once at start; a record of fewer than three columns or a CSV syntax error refuses the start with
// kube's message. An empty token is skipped and a repeated one replaces the earlier record, both
// with kube's warning. Static tokens are audience-agnostic (kube's WrapAudienceAgnosticToken):
// they carry the API server's own audiences.
import { readFileSync } from 'node:fs';
import type { TokenAuthenticator } from './token.ts';
import type { UserInfo } from './user.ts';

/**
 * The token → user table of a token file. Throws kube's error for a file kube refuses; `warn`
 * hears kube's warnings (empty and repeated tokens).
 */
export function readTokenFile(path: string, warn: (line: string) => void = () => {}): Map<string, UserInfo> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(goOpenError(path, e));
  }
  const tokens = new Map<string, UserInfo>();
  let recordNum = 0;
  for (const record of readGoCsv(text)) {
    if (record.length < 3) throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    recordNum++;
    if (record[0] === '') {
      warn(`empty token has been found in token file '${path}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(record[0])) warn(`duplicate token has been found in token file '${path}', record number '${recordNum}'`);
    const user: UserInfo = { name: record[1], uid: record[2], groups: record.length >= 4 ? record[3].split(',') : [] };
    tokens.set(record[0], user);
  }
  return tokens;
}

/**
 * The token authenticator over a token file's table. `implicitAudiences` are the API server's
 * audiences (--api-audiences): a request for other audiences gets no opinion, as kube's
 * audience-agnostic wrapper answers.
 */
export function staticTokenAuthenticator(tokens: ReadonlyMap<string, UserInfo>, implicitAudiences: readonly string[] = []): TokenAuthenticator {
  return {
    name: 'token-file',
    authenticateToken(token, audiences) {
      let granted: string[] | undefined;
      if (audiences !== undefined && audiences.length > 0) {
        granted = implicitAudiences.filter((a) => audiences.includes(a));
        if (granted.length === 0) return undefined;
      }
      // A Map lookup: the cost of a wrong token is one hash of it, whatever its length.
      const user = tokens.get(token);
      if (!user) return undefined;
      return granted ? { user, audiences: granted } : { user };
    },
  };
}

/** Go's os.Open error text (`open PATH: no such file or directory`), which kube prints as it is. */
function goOpenError(path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return `read ${path}: is a directory`;
  const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'not a directory' : (e as Error).message;
  return `open ${path}: ${reason}`;
}

/** Go's csv.ParseError text. */
function csvError(startLine: number, line: number, column: number, err: string): Error {
  if (startLine !== line) return new Error(`record on line ${startLine}; parse error on line ${line}, column ${column}: ${err}`);
  return new Error(`parse error on line ${line}, column ${column}: ${err}`);
}

const ERR_BARE_QUOTE = 'bare " in non-quoted-field';
const ERR_QUOTE = 'extraneous or missing " in quoted-field';

/**
 * The records of a CSV text as Go's encoding/csv Reader reads them with kube's settings (comma
 * separated, any number of fields per record, strict quotes, no comments): empty lines are
 * skipped, `\r\n` ends a line like `\n`, a quoted field may span lines and doubles its quotes,
 * and a quote inside an unquoted field is an error. Columns are 1-based byte offsets, as Go counts.
 */
export function readGoCsv(text: string): string[][] {
  const lines = splitLines(text);
  const records: string[][] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i] === '') {
      i++;
      continue;
    }
    const startLine = i + 1;
    const fields: string[] = [];
    let line = lines[i];
    let col = 1;
    for (;;) {
      if (line[0] !== '"') {
        // Unquoted field: up to the next comma or the line's end.
        const comma = line.indexOf(',');
        const field = comma >= 0 ? line.slice(0, comma) : line;
        const quote = field.indexOf('"');
        if (quote >= 0) throw csvError(startLine, i + 1, col + byteLength(field.slice(0, quote)), ERR_BARE_QUOTE);
        fields.push(field);
        if (comma < 0) break;
        col += byteLength(field) + 1;
        line = line.slice(comma + 1);
        continue;
      }
      // Quoted field: up to a lone closing quote followed by a comma or the line's end.
      let value = '';
      line = line.slice(1);
      col += 1;
      let ended: 'comma' | 'line' | undefined;
      while (ended === undefined) {
        const q = line.indexOf('"');
        if (q < 0) {
          // The field goes on past this line.
          value += line;
          if (i + 1 >= lines.length) throw csvError(startLine, i + 1, col + byteLength(line), ERR_QUOTE);
          value += '\n';
          i++;
          line = lines[i];
          col = 1;
          continue;
        }
        value += line.slice(0, q);
        col += byteLength(line.slice(0, q)) + 1;
        line = line.slice(q + 1);
        if (line[0] === '"') {
          value += '"';
          line = line.slice(1);
          col += 1;
        } else if (line[0] === ',') {
          line = line.slice(1);
          col += 1;
          ended = 'comma';
        } else if (line === '') {
          ended = 'line';
        } else {
          throw csvError(startLine, i + 1, col - 1, ERR_QUOTE);
        }
      }
      fields.push(value);
      if (ended === 'line') break;
    }
    records.push(fields);
    i++;
  }
  return records;
}

/** The text's lines without their endings (`\n` or `\r\n`); a final line without one counts. */
function splitLines(text: string): string[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
