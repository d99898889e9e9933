// Reading fields of the decoded JSON objects plugins are handed, where anything may be missing or
// of another type until validation: an object, a list or a string, else an empty one.
export type Json = Record<string, unknown>;
export const rec = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
