// Table output for custom resources, as kube-apiserver's CRD table convertor
// (apiextensions-apiserver tableconvertor) builds it from a version's additionalPrinterColumns.
//
// Columns: Name (string, format "name"), then each printer column in order with its name, type,
// format, description (a generated one when empty) and priority. A version without columns gets
// kube's default: Age, a date column over .metadata.creationTimestamp.
//
// Cells: each column's JSONPath ("{<jsonPath>}", missing keys allowed) is evaluated and only
// the first value of the first result set is used. No value or an evaluation error gives null
// (kubectl shows "<none>"). Then by column type: string prints the value the way client-go's
// jsonpath prints it (maps and lists as JSON, JSON null as "<no value>"); integer takes an
// integer as is and truncates a fractional number; number takes any number; boolean a boolean;
// date parses an RFC 3339 string into an age ("<invalid>" when it does not parse, "<unknown>"
// for "" or the zero time). A value of any other kind is null.
//
// A column whose JSONPath does not parse ends the column list there, as in kube, which then
// serves the columns before it; `error` carries kube's message for that case.
import { humanDuration } from './columns.ts';
import type { TableColumnDefinition, TablePrinter } from '../../schema/types.ts';
import { compileJsonPath, jsonPathText, JsonPathError, type JsonPath } from '../crd/jsonpath.ts';
import { goQuote } from '../../go/strconv.ts';
import { parseRFC3339, ZERO_TIME } from '../../go/time.ts';

/** metav1.ObjectMeta's documentation of name (kube's Name column description). */
export const OBJECT_META_NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** metav1.ObjectMeta's documentation of creationTimestamp (the default Age column's description). */
export const OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** The column kube serves for a version that declares no additionalPrinterColumns. */
export const DEFAULT_CRD_COLUMNS: readonly Record<string, unknown>[] = Object.freeze([
  Object.freeze({ name: 'Age', type: 'date', description: OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' }),
]);

export interface CrdTablePrinter extends TablePrinter {
  /** kube's "unrecognized column definition" message when a column's JSONPath did not parse. */
  error?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) ? v : 0);

/**
 * The table printer for one CRD version, from its spec.versions[].additionalPrinterColumns
 * (v1 "jsonPath"; the v1beta1 spelling "JSONPath" is accepted too). Compile once per version:
 * cells() only evaluates the compiled paths.
 */
export function crdTablePrinter(columns: readonly any[] | null | undefined): CrdTablePrinter {
  const defs = columns && columns.length > 0 ? columns : DEFAULT_CRD_COLUMNS;
  const headers: TableColumnDefinition[] = [
    { name: 'Name', type: 'string', format: 'name', description: OBJECT_META_NAME_DESCRIPTION, priority: 0 },
  ];
  const paths: JsonPath[] = [];
  const types: string[] = [];
  let error: string | undefined;
  for (const col of defs) {
    const jsonPath = str(col?.jsonPath ?? col?.JSONPath);
    let path: JsonPath;
    try {
      path = compileJsonPath(jsonPath);
    } catch (e) {
      if (!(e instanceof JsonPathError)) throw e;
      error = `unrecognized column definition ${goQuote(jsonPath)}`;
      break;
    }
    const description = str(col?.description);
    headers.push({
      name: str(col?.name),
      type: str(col?.type),
      format: str(col?.format),
      description: description.length > 0 ? description : `Custom resource definition column (in JSONPath format): ${jsonPath}`,
      priority: int(col?.priority),
    });
    paths.push(path);
    types.push(str(col?.type));
  }

  const cells = (obj: any, now: number): unknown[] => {
    const out: unknown[] = new Array(paths.length + 1);
    out[0] = str(obj?.metadata?.name);
    for (let i = 0; i < paths.length; i++) out[i + 1] = columnCell(paths[i], types[i], obj, now);
    return out;
  };
  return error === undefined ? { columns: headers, cells } : { columns: headers, cells, error };
}

function columnCell(path: JsonPath, type: string, obj: unknown, now: number): unknown {
  let first: unknown[];
  try {
    first = path.find(obj);
  } catch (e) {
    if (e instanceof JsonPathError) return null;
    throw e;
  }
  if (first.length === 0) return null;
  const value = first[0];
  if (type === 'string') {
    // kube re-wraps the value before printing it, so JSON null reaches the printer as an
    // invalid reflect.Value, which text/template prints as "<no value>".
    return value === null || value === undefined ? '<no value>' : jsonPathText(value);
  }
  return cellForJSONValue(type, value, now);
}

const TWO63 = 2 ** 63;

/** tableconvertor's cellForJSONValue for the non-string column types. */
export function cellForJSONValue(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      // an int64 as is; a float64 converted with int64(), which truncates
      if (typeof value === 'number' && Number.isFinite(value)) return Number.isInteger(value) && Math.abs(value) < TWO63 ? value : Math.trunc(value);
      return null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const t = parseQueryTime(value);
      if (t === undefined) return '<invalid>';
      if (t === ZERO_TIME) return '<unknown>';
      return humanDuration(clampDuration(now - t));
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// metav1.Time.UnmarshalQueryParameter: "" and "null" are the zero time, anything else must
// parse with time.Parse(time.RFC3339, s).

/** Epoch milliseconds for a query-parameter time, ZERO_TIME for the zero time, undefined when invalid. */
export function parseQueryTime(s: string): number | undefined {
  if (s === '' || s === 'null') return ZERO_TIME;
  const t = parseRFC3339(s);
  if (!t) return undefined;
  return t.fraction ? t.ms + Number(`0.${t.fraction.slice(0, 9)}`) * 1000 : t.ms;
}

/** time.Since saturates at the largest time.Duration (about 292 years). */
const MAX_DURATION_MS = 9_223_372_036_854.775;
const clampDuration = (ms: number): number => Math.max(-MAX_DURATION_MS, Math.min(MAX_DURATION_MS, ms));
