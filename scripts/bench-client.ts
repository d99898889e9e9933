// A lean HTTP/1.1 client over one TLS connection, for benchmarks: on a 2-core machine Node's
// https client costs about as much CPU per request as the server does, so measuring with it
// measures the client. This one writes prebuilt request bytes and parses only the status line,
// Content-Length and body. One request at a time per connection (keep-alive, no pipelining).
import tls from 'node:tls';

export interface TlsCredentials {
  ca: string;
  cert: string;
  key: string;
}

export interface LeanResponse {
  status: number;
  body: Buffer;
}

export class LeanConnection {
  private socket!: tls.TLSSocket;
  private buf: Buffer = Buffer.alloc(0);
  /** Once the head is parsed: body chunks gathered without re-copying (large lists). */
  private body?: { status: number; length: number; chunks: Buffer[]; have: number };
  private pending?: { resolve: (r: LeanResponse) => void; reject: (e: Error) => void };
  private readonly hostHeader: string;

  private constructor(private readonly host: string, private readonly port: number) {
    this.hostHeader = `${host}:${port}`;
  }

  static async open(url: string, creds: TlsCredentials): Promise<LeanConnection> {
    const u = new URL(url);
    const c = new LeanConnection(u.hostname, Number(u.port));
    await new Promise<void>((resolve, reject) => {
      c.socket = tls.connect({ host: c.host, port: c.port, ca: creds.ca, cert: creds.cert, key: creds.key, servername: 'localhost' }, resolve);
      c.socket.once('error', reject);
    });
    c.socket.setNoDelay(true);
    c.socket.on('data', (d) => c.onData(d));
    c.socket.on('error', (e) => c.pending?.reject(e));
    return c;
  }

  request(method: string, path: string, body?: Buffer, contentType = 'application/json'): Promise<LeanResponse> {
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nAccept: application/json\r\n`;
    if (body) head += `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n`;
    head += '\r\n';
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(body ? Buffer.concat([Buffer.from(head), body]) : head);
    });
  }

  private onData(d: Buffer): void {
    if (this.body) {
      this.body.chunks.push(d);
      this.body.have += d.length;
    } else {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      const m = /content-length:\s*(\d+)/i.exec(head);
      if (!m) throw new Error(`lean client needs Content-Length: ${head}`);
      const rest = this.buf.subarray(end + 4);
      this.buf = Buffer.alloc(0);
      this.body = { status: Number(head.slice(9, 12)), length: Number(m[1]), chunks: [rest], have: rest.length };
    }
    const b = this.body;
    if (b.have < b.length) return;
    const all = b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks);
    this.body = undefined;
    this.buf = all.subarray(b.length);
    const p = this.pending!;
    this.pending = undefined;
    p.resolve({ status: b.status, body: all.subarray(0, b.length) });
  }

  close(): void {
    this.socket.destroy();
  }
}
