// Giving the pages a compaction freed back to the filesystem: the file is made with
// auto_vacuum=INCREMENTAL (database.ts), so `PRAGMA incremental_vacuum` moves pages from the end
// of the file into free ones and cuts the file short (when the WAL is next copied back into it).
// It runs on the writer thread in slices between write batches, as compaction slices do.
import { nextSliceSize } from '../log/slices.ts';
import { nextTurn as eventLoopTurn } from '../../util/turns.ts';
import type { NextTurn, SpaceReleased } from '../log/backend.ts';
import type { WriterResponse } from './writer-protocol.ts';

/** Bounds on the pages one vacuum slice moves (each moved page is a WAL write, like a compaction slice's rows). */
const VACUUM_PAGES_MIN = 16;
const VACUUM_PAGES_MAX = 4096;
/** Free pages kept for the writes to come rather than given back: this fraction of the pages in use. */
const FREE_PAGES_KEPT = 1 / 8;

export interface VacuumPort {
  freePages(): number;
  pageCount(): number;
  /** One slice on the writer thread: answered with the free pages left, how long it took and its own cost. */
  vacuum(pages: number): Promise<WriterResponse>;
}

/**
 * Gives the file's free pages back to the filesystem but for a slack kept for the writes to
 * come, in slices on the writer thread between write batches, as compaction slices run: a batch
 * waits for one slice at most. The file itself shrinks when the checkpointer next copies the
 * WAL back into it.
 */
export async function releaseFreePages(port: VacuumPort, nextTurn: NextTurn): Promise<SpaceReleased> {
  const done = { pagesReleased: 0, slices: 0, longestMs: 0, longestPauseMs: 0 };
  let free = port.freePages();
  // (a fraction of the pages in use, not of the file before it shrinks)
  const keep = Math.floor((port.pageCount() - free) * FREE_PAGES_KEPT);
  // (small at first: what a page move costs depends on the file, and the slices adapt from there)
  let pages = VACUUM_PAGES_MIN * 2;
  while (free > keep) {
    // Shutting down: the next compaction gives back the rest.
    if (!(await nextTurn())) break;
    const r = await port.vacuum(Math.min(pages, free - keep));
    if (!r.ok) throw new Error(`giving space back failed: ${r.error}`);
    const left = r.freePages ?? free;
    // (nothing moved: a file without auto_vacuum, which openDatabase converts at start)
    if (left >= free) break;
    done.pagesReleased += free - left;
    free = left;
    done.slices++;
    done.longestMs = Math.max(done.longestMs, r.ms ?? 0);
    done.longestPauseMs = Math.max(done.longestPauseMs, r.ms ?? 0, r.tailMs ?? 0);
    pages = nextSliceSize(pages, r, VACUUM_PAGES_MIN, VACUUM_PAGES_MAX);
    await eventLoopTurn();
  }
  return done;
}
