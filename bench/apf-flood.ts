// The flooding client of bench:apf, in its own process (started by bench-apf.ts with fork): it
// LISTs one path in a tight loop on N keep-alive connections until its parent sends 'stop'; then
// it reports the answers it got and exits. After a 429 a connection waits Retry-After seconds,
// as client-go does, unless told to ignore it (a client that retries at once). Its own process,
// so the time it spends reading megabytes of lists is not spent on the measuring client's loop.
import { LeanConnection } from './bench-client.ts';

export interface FloodOrders {
  url: string;
  ca: string;
  bearerToken: string;
  path: string;
  connections: number;
  ignoreRetryAfter: boolean;
}

export interface FloodAnswers {
  ok: number;
  tooMany: number;
  error?: string;
}

/** Sleeps `ms`, or less once 'stop' has come. */
async function waitUnlessStopped(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!stop && Date.now() < until) await new Promise((r) => setTimeout(r, Math.min(50, until - Date.now())));
}

const orders = JSON.parse(process.env.HEARTH_BENCH_FLOOD ?? '{}') as FloodOrders;
const answers: FloodAnswers = { ok: 0, tooMany: 0 };
let stop = false;
process.on('message', (m) => {
  if (m === 'stop') stop = true;
});
try {
  const conns = await Promise.all(Array.from({ length: orders.connections }, () => LeanConnection.open(orders.url, { ca: orders.ca, cert: '', key: '' }, { bearerToken: orders.bearerToken })));
  process.send!('ready');
  await Promise.all(
    conns.map(async (c) => {
      while (!stop) {
        const r = await c.request('GET', orders.path);
        if (r.status === 200) answers.ok++;
        else if (r.status === 429) {
          answers.tooMany++;
          if (r.retryAfter === undefined) throw new Error('a 429 without Retry-After');
          if (!orders.ignoreRetryAfter) await waitUnlessStopped(r.retryAfter * 1000);
        }
        else throw new Error(`flood LIST: ${r.status} ${r.body.toString().slice(0, 200)}`);
      }
      c.close();
    }),
  );
} catch (e) {
  answers.error = (e as Error).stack ?? String(e);
}
process.send!(answers, () => process.exit(0));
