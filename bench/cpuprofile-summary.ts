// node --import tsx bench/cpuprofile-summary.ts PROFILE.cpuprofile [PHASES.json] [--top=N] [--diff=a,b]
// Sums a V8 CPU profile (what `node --cpu-prof` writes; the benchmarks' --cpu-prof=DIR) by
// function: self time (samples whose top frame is the function) and total time (samples with the
// function anywhere on the stack, counted once per sample), in µs.
// With a phases file (written by bench:auth and `bench --only=rbac` next to the profile), the
// samples are split by the time windows in which each phase ran — the benchmark's clock
// (process.hrtime) and V8's sample timestamps are both CLOCK_MONOTONIC, so one server, serving
// its users in turns, gives a profile per user — and divided by the phase's request count: µs of
// server CPU per request, per function. --diff=a,b then lists the functions whose µs per request
// differ most between phases a and b (what b costs more than a, function by function).
// Samples at the top of "(idle)" and "(program)" are left out of the per-request totals' ranking
// but shown; "(garbage collector)" is kept: allocation is a cost of the request.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A phase: the monotonic-clock windows (µs) it ran in, and how many requests it served. */
export interface Phase {
  windows: Array<[number, number]>;
  requests: number;
}
export type Phases = Record<string, Phase>;

export interface FunctionCost {
  /** "name file:line" */
  fn: string;
  selfUs: number;
  totalUs: number;
}

export interface PhaseSummary {
  /** Sampled time in the phase's windows, idle excluded (µs). */
  busyUs: number;
  idleUs: number;
  requests: number;
  byFunction: Map<string, FunctionCost>;
}

function label(cf: CallFrame): string {
  const file = cf.url ? cf.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^file:\/\//, '') : '';
  return file ? `${cf.functionName || '(anonymous)'} ${file}:${cf.lineNumber + 1}` : cf.functionName || '(anonymous)';
}

/** Splits the profile's samples by phase (or one phase, "all", without phases) and sums them by function. */
export function summarize(profile: CpuProfile, phases?: Phases): Map<string, PhaseSummary> {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const names = new Map<number, string>();
  for (const n of profile.nodes) names.set(n.id, label(n.callFrame));
  const phaseList = phases ? Object.entries(phases) : [['all', { windows: [[-Infinity, Infinity]], requests: 0 }] as [string, Phase]];
  const out = new Map<string, PhaseSummary>(phaseList.map(([name, p]) => [name, { busyUs: 0, idleUs: 0, requests: p.requests, byFunction: new Map() }]));
  const phaseAt = (t: number): string | undefined => {
    for (const [name, p] of phaseList) for (const [a, b] of p.windows) if (t >= a && t < b) return name;
    return undefined;
  };
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    // A sample stands for the time until the next one (the last: until the profile's end).
    const dt = i + 1 < profile.samples.length ? profile.timeDeltas[i + 1] : profile.endTime - t;
    if (!(dt > 0)) continue;
    const which = phaseAt(t);
    if (which === undefined) continue;
    const s = out.get(which)!;
    const top = profile.samples[i];
    const topName = names.get(top)!;
    if (topName === '(idle)') {
      s.idleUs += dt;
      continue;
    }
    s.busyUs += dt;
    const cost = (fn: string) => {
      let c = s.byFunction.get(fn);
      if (!c) s.byFunction.set(fn, (c = { fn, selfUs: 0, totalUs: 0 }));
      return c;
    };
    cost(topName).selfUs += dt;
    const seen = new Set<string>();
    for (let id: number | undefined = top; id !== undefined; id = parent.get(id)) {
      const fn = names.get(id)!;
      if (seen.has(fn)) continue;
      seen.add(fn);
      cost(fn).totalUs += dt;
    }
  }
  return out;
}

/** Lines: each phase's busy µs per request and its top functions by self time; then the diff. */
export function report(summaries: Map<string, PhaseSummary>, opts: { top?: number; diff?: [string, string] } = {}): string[] {
  const top = opts.top ?? 20;
  const lines: string[] = [];
  const per = (s: PhaseSummary, us: number) => (s.requests > 0 ? us / s.requests : us / 1000);
  const unit = (s: PhaseSummary) => (s.requests > 0 ? 'µs/request' : 'ms');
  for (const [name, s] of summaries) {
    lines.push(`${name}: ${s.requests > 0 ? `${s.requests} requests, ` : ''}busy ${per(s, s.busyUs).toFixed(1)} ${unit(s)} (idle ${(s.idleUs / 1000).toFixed(0)} ms of ${((s.idleUs + s.busyUs) / 1000).toFixed(0)} ms sampled)`);
    const fns = [...s.byFunction.values()].sort((a, b) => b.selfUs - a.selfUs).slice(0, top);
    for (const f of fns) lines.push(`  self ${per(s, f.selfUs).toFixed(2).padStart(7)}  total ${per(s, f.totalUs).toFixed(2).padStart(7)}  ${f.fn}`);
  }
  if (opts.diff) {
    const [a, b] = opts.diff.map((n) => summaries.get(n));
    if (!a || !b) throw new Error(`--diff: no phase ${opts.diff.join(' or ')} (phases: ${[...summaries.keys()].join(', ')})`);
    lines.push(`${opts.diff[1]} − ${opts.diff[0]}: busy ${(per(b, b.busyUs) - per(a, a.busyUs)).toFixed(2)} ${unit(a)}; functions by |difference in self time| (total time in brackets):`);
    const fns = new Set([...a.byFunction.keys(), ...b.byFunction.keys()]);
    const rows = [...fns].map((fn) => {
      const fa = a.byFunction.get(fn);
      const fb = b.byFunction.get(fn);
      return { fn, self: per(b, fb?.selfUs ?? 0) - per(a, fa?.selfUs ?? 0), total: per(b, fb?.totalUs ?? 0) - per(a, fa?.totalUs ?? 0) };
    });
    rows.sort((x, y) => Math.abs(y.self) - Math.abs(x.self));
    for (const r of rows.slice(0, top)) lines.push(`  self ${(r.self >= 0 ? '+' : '') + r.self.toFixed(2).padStart(6)}  [${(r.total >= 0 ? '+' : '') + r.total.toFixed(2)}]  ${r.fn}`);
    rows.sort((x, y) => Math.abs(y.total) - Math.abs(x.total));
    lines.push(`  … by |difference in total time|:`);
    for (const r of rows.slice(0, top)) lines.push(`  total ${(r.total >= 0 ? '+' : '') + r.total.toFixed(2).padStart(6)}  ${r.fn}`);
  }
  return lines;
}

/**
 * What a benchmark run with --cpu-prof=DIR prints: the server's profile (the newest .cpuprofile
 * in dir written since `since`, ms) split by phase, and for each pair [reference, other] both
 * phases' top functions and their difference. The phases go to <profile>.phases.json beside it,
 * for this script's command line.
 */
export function profileReport(dir: string, since: number, phases: Phases, pairs: Array<[string, string]>): string[] {
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).filter((f) => statSync(f).mtimeMs >= since).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file) throw new Error(`no .cpuprofile written to ${dir}`);
  const phasesFile = file.replace(/\.cpuprofile$/, '.phases.json');
  writeFileSync(phasesFile, JSON.stringify(phases));
  const summaries = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, phases);
  const lines = ['', `server CPU profile: ${file}`, `  again, or in more detail: node --import tsx bench/cpuprofile-summary.ts ${file} ${phasesFile} --top=N --diff=a,b`];
  for (const [a, b] of pairs) {
    if (!summaries.has(a) || !summaries.has(b)) continue;
    lines.push(...report(new Map([[a, summaries.get(a)!], [b, summaries.get(b)!]]), { top: 15, diff: [a, b] }));
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (!args[0]) throw new Error('usage: cpuprofile-summary.ts PROFILE.cpuprofile [PHASES.json] [--top=N] [--diff=a,b]');
  const profile = JSON.parse(readFileSync(args[0], 'utf8')) as CpuProfile;
  const phases = args[1] ? (JSON.parse(readFileSync(args[1], 'utf8')) as Phases) : undefined;
  const diff = flag('diff')?.split(',') as [string, string] | undefined;
  for (const line of report(summarize(profile, phases), { top: Number(flag('top') ?? 20), diff })) console.log(line);
}
