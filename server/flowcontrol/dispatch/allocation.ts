// How the server's seats are shared among priority levels (kube's apf_controller.go and
// conc_alloc.go). Each level's nominal limit is ceil(serverCL × its shares / all shares) — the
// exempt level's shares (0 by default) count in the sum, as kube 1.36 counts them; a level may
// lend lendablePercent of it and borrow up to borrowingLimitPercent (unbounded: the server's
// limit). Every 10 s the current limits are re-derived from each level's observed seat demand:
// the one fair proportion that, applied to each level's smoothed demand and clamped to its
// bounds, shares out exactly the sum of the nominal limits.
import type { IntegratorResults } from './integrator.ts';

export interface AllocProblemItem {
  target: number;
  lowerBound: number;
  upperBound: number;
}

const MIN_TARGET = 0.001;
const EPSILON = 0.0000001;

/**
 * computeConcurrencyAllocation: allocs summing to requiredSum, each clamp(fairProp × target,
 * lower, upper) for one fairProp. kube walks the sorted bounds; the sum is monotone in fairProp,
 * so bisection finds the same fairProp (to floating-point precision).
 */
export function computeConcurrencyAllocation(requiredSum: number, classes: readonly AllocProblemItem[]): { allocs: number[]; fairProp: number } | string {
  if (requiredSum < 0) return 'negative sums are not supported';
  let lowSum = 0;
  let highSum = 0;
  let targetSum = 0;
  let lbMin = Infinity;
  let lbMax = -Infinity;
  let ubMin = Infinity;
  let ubMax = -Infinity;
  const targets: number[] = [];
  for (const [idx, item] of classes.entries()) {
    if (item.lowerBound < 0) return `lower bound ${idx} is ${item.lowerBound} but negative lower bounds are not allowed`;
    if (item.target < item.lowerBound) return `target ${idx} is ${item.target}, which is below its lower bound of ${item.lowerBound}`;
    if (item.upperBound < item.lowerBound) return `upper bound ${idx} is ${item.upperBound} but should not be less than the lower bound ${item.lowerBound}`;
    const target = Math.max(item.target, MIN_TARGET);
    targets.push(target);
    lowSum += item.lowerBound;
    highSum += item.upperBound;
    targetSum += target;
    lbMin = Math.min(lbMin, item.lowerBound / target);
    lbMax = Math.max(lbMax, item.lowerBound / target);
    ubMin = Math.min(ubMin, item.upperBound / target);
    ubMax = Math.max(ubMax, item.upperBound / target);
  }
  if (lowSum - requiredSum > EPSILON) return `lower bounds sum to ${lowSum}, which is higher than the required sum of ${requiredSum}`;
  if (requiredSum - highSum > EPSILON) return `upper bounds sum to ${highSum}, which is lower than the required sum of ${requiredSum}`;
  if (requiredSum === 0) return { allocs: classes.map(() => 0), fairProp: 0 };
  if (lowSum - requiredSum > -EPSILON) return { allocs: classes.map((c) => c.lowerBound), fairProp: lbMin };
  if (requiredSum - highSum > -EPSILON) return { allocs: classes.map((c) => c.upperBound), fairProp: ubMax };
  const sumAt = (fp: number): number => classes.reduce((s, c, i) => s + Math.max(c.lowerBound, Math.min(c.upperBound, fp * targets[i])), 0);
  let fairProp = requiredSum / targetSum;
  if (!(lbMax <= fairProp && fairProp <= ubMin)) {
    let lo = lbMin;
    let hi = ubMax;
    for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
      const mid = (lo + hi) / 2;
      if (sumAt(mid) < requiredSum) lo = mid;
      else hi = mid;
    }
    fairProp = hi;
  }
  return { allocs: classes.map((c, i) => Math.max(c.lowerBound, Math.min(c.upperBound, fairProp * targets[i]))), fairProp };
}

/** seatDemandSmoothingCoefficient: a 5-minute half-life over 10-second periods. */
const SMOOTHING = 0.977;

/** A level's seat demand over the last period, and its smoothed envelope (kube's seatDemandStats). */
export class SeatDemandStats {
  avg = 0;
  stdDev = 0;
  highWatermark = 0;
  smoothed = 0;

  update(obs: IntegratorResults): void {
    this.highWatermark = obs.max;
    if (obs.duration <= 0) return;
    const deviation = Number.isNaN(obs.deviation) ? 0 : obs.deviation;
    this.avg = obs.average;
    this.stdDev = deviation;
    const envelope = obs.average + deviation;
    this.smoothed = Math.max(envelope, SMOOTHING * this.smoothed + (1 - SMOOTHING) * envelope);
  }
}
