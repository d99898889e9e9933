// Gap: @bufbuild/cel words some runtime errors differently from cel-go, whose words kube-apiserver
// answers with; and how cel-go prints values in the errors the gap-filling functions raise.
import { isCelList, isCelMap, isCelUint } from '@bufbuild/cel';

/** Go's %v of a CEL map key, as cel-go prints it in "insert failed" errors. */
export const goKey = (k: any): string => (isCelUint(k) ? String(k.value) : String(k));

/** A value in a runtime error message (Go's %v of simple values). */
export function goValueText(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isCelUint(v)) return String(v.value);
  if (v === null) return 'null_type';
  return isCelList(v) ? 'list' : isCelMap(v) ? 'map' : String(v);
}

/** cel-go's wording for runtime errors @bufbuild/cel words differently. */
export function runtimeErrorText(msg: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^field not found: (.*)$/.exec(msg))) return `no such key: ${m[1]}`;
  if ((m = /^index (-?\d+) out of bounds \[0, (-?\d+)\)$/.exec(msg))) return `index '${m[1]}' out of range in list size '${Math.max(0, Number(m[2]))}'`;
  if (/divide by zero/.test(msg)) return 'division by zero';
  if (/modulus by zero/.test(msg)) return 'modulus by zero';
  if (/overflow/.test(msg)) return 'integer overflow';
  return msg;
}
export const isOverloadError = (msg: string) => /no such overload|no matching overload|unbound function/.test(msg);
