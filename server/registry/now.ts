// The time now as a metav1.Time (RFC 3339, whole seconds), for what the store, the kinds and the
// controllers stamp on objects: creation, deletion and condition times. Below the store and the
// kinds, so both can use it.
import { formatRFC3339 } from '../go/time.ts';

let stampSecond = -1;
let stampText = '';
/** The time now as a metav1.Time; formatted once per second. */
export function nowTimestamp(): string {
  const sec = Math.floor(Date.now() / 1000);
  if (sec !== stampSecond) {
    stampSecond = sec;
    stampText = formatRFC3339(sec * 1000);
  }
  return stampText;
}
