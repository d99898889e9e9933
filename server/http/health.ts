// /livez, /readyz, /healthz: named checks, ?verbose, ?exclude=, and /<endpoint>/<check>.
import type Router from '@koa/router';
import { queryOf } from './request-info.ts';
import { fallbackLogger, type Logger } from '../logging/logger.ts';

export interface HealthCheck {
  name: string;
  check(): string | undefined; // undefined = ok, else the failure reason
}

/** Told each check's result when /livez, /readyz or /healthz runs them all (kube's slis.ObserveHealthcheck). */
export type HealthObserver = (name: string, endpoint: string, passed: boolean) => void;

export function registerHealthRoutes(router: Router, checks: { livez: HealthCheck[]; readyz: HealthCheck[] }, observe?: HealthObserver, logger: Logger = fallbackLogger()): void {
  const endpoints: Record<string, HealthCheck[]> = { livez: checks.livez, readyz: checks.readyz, healthz: checks.readyz };
  for (const [endpoint, list] of Object.entries(endpoints)) {
    router.get(`/${endpoint}`, (ctx) => {
      const q = queryOf(ctx);
      const excluded = new Set(q.getAll('exclude'));
      const verbose = q.has('verbose') && q.get('verbose') !== 'false';
      const lines: string[] = [];
      let failed = false;
      for (const c of list) {
        if (excluded.has(c.name)) {
          lines.push(`[+]${c.name} excluded: ok`);
          continue;
        }
        const err = c.check();
        observe?.(c.name, endpoint, !err);
        if (err) failed = true;
        lines.push(err ? `[-]${c.name} failed: reason withheld` : `[+]${c.name} ok`);
        // (healthz.go: the reason goes to the log at -v=2, never to the public response)
        if (err) logger.v(2).info(`${endpoint} check failed`, 'check', c.name, 'reason', err);
      }
      const unknown = [...excluded].filter((n) => !list.some((c) => c.name === n));
      if (unknown.length) lines.push(`warn: some health checks cannot be excluded: no matches for "${unknown.join('", "')}"`);
      ctx.type = 'text/plain; charset=utf-8';
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.status = failed ? 500 : 200;
      if (failed || verbose) ctx.body = `${lines.join('\n')}\n${endpoint} check ${failed ? 'failed' : 'passed'}\n`;
      else ctx.body = 'ok';
    });
    router.get(`/${endpoint}/*check`, (ctx) => {
      const name = wildcard(ctx.params.check);
      const c = list.find((x) => x.name === name);
      if (!c) {
        ctx.status = 404;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = '404 page not found\n';
        return;
      }
      const err = c.check();
      ctx.type = 'text/plain; charset=utf-8';
      ctx.status = err ? 500 : 200;
      ctx.body = err ? `internal server error: ${err}\n` : 'ok';
    });
  }
}

/** path-to-regexp wildcards may come back as a segment array or a joined string. */
export function wildcard(v: unknown): string {
  return Array.isArray(v) ? v.join('/') : String(v ?? '');
}
