// Work done on the writer between write batches (compaction, and giving space back after it)
// goes in slices: a batch waits for one slice at most, so each slice is sized to keep the writer
// from committing for about SLICE_TARGET_MS.

/** How long one slice may keep the writer thread from committing (its own cost: CPU and I/O, not time preempted). */
const SLICE_TARGET_MS = 2;

/**
 * The next slice's size (rows or pages) from the last one's cost, aiming at SLICE_TARGET_MS:
 * its own cost, as a slice preempted by other threads says nothing about the next one's size.
 * It grows only after a slice that was hardly preempted: on a busy machine the CPU wait the
 * writer reads can be overstated, and the next slice would double for nothing.
 */
export function nextSliceSize(size: number, r: { ms?: number; busyMs?: number }, min: number, max: number): number {
  const ms = r.ms ?? 0;
  const busy = r.busyMs ?? ms;
  const scale = SLICE_TARGET_MS / Math.max(busy, 0.01);
  if (scale >= 1 && ms - busy >= 1) return size;
  return Math.round(Math.min(max, Math.max(min, size * Math.min(2, Math.max(0.5, scale)))));
}
