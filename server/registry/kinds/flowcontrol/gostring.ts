// Go's %#v of the internal flowcontrol spec structs, which kube's field.Invalid prints as the bad
// value of "spec of 'x' must equal the fixed value" (ErrorBody falls back to %#v for structs).
// Field order is the internal types' (pkg/apis/flowcontrol/types.go). A non-nil pointer prints as
// Go prints it, (*T)(0x…): its address is the process's, so a fixed stand-in is printed here.
import { goQuote } from '../../../go/strconv.ts';
import { goNumber } from '../../../go/fmt.ts';
import { isPlainObject } from '../../../util/json.ts';

type Json = Record<string, unknown>;
const POINTER = '0xc000000000';
const T = (name: string) => `flowcontrol.${name}`;
const o = (v: unknown): Json | undefined => (isPlainObject(v) ? (v as Json) : undefined);
const s = (v: unknown) => goQuote(typeof v === 'string' ? v : '');
const n = (v: unknown) => goNumber(typeof v === 'number' ? v : 0);
const ptr = (type: string, v: unknown) => `(*${T(type)})(${v == null ? 'nil' : POINTER})`;
const strs = (v: unknown) => (Array.isArray(v) ? `[]string{${v.map(s).join(', ')}}` : '[]string(nil)');
const slice = (type: string, v: unknown, each: (x: Json) => string) => (Array.isArray(v) ? `[]${T(type)}{${v.map((x) => each(o(x) ?? {})).join(', ')}}` : `[]${T(type)}(nil)`);

const subject = (x: Json) => `${T('Subject')}{Kind:${s(x.kind)}, User:${ptr('UserSubject', x.user)}, Group:${ptr('GroupSubject', x.group)}, ServiceAccount:${ptr('ServiceAccountSubject', x.serviceAccount)}}`;
const resourceRule = (x: Json) => `${T('ResourcePolicyRule')}{Verbs:${strs(x.verbs)}, APIGroups:${strs(x.apiGroups)}, Resources:${strs(x.resources)}, ClusterScope:${x.clusterScope === true}, Namespaces:${strs(x.namespaces)}}`;
const nonResourceRule = (x: Json) => `${T('NonResourcePolicyRule')}{Verbs:${strs(x.verbs)}, NonResourceURLs:${strs(x.nonResourceURLs)}}`;
const rules = (x: Json) => `${T('PolicyRulesWithSubjects')}{Subjects:${slice('Subject', x.subjects, subject)}, ResourceRules:${slice('ResourcePolicyRule', x.resourceRules, resourceRule)}, NonResourceRules:${slice('NonResourcePolicyRule', x.nonResourceRules, nonResourceRule)}}`;

/** %#v of a flowcontrol.FlowSchemaSpec. */
export function goSharpVOfFlowSchemaSpec(spec: Json): string {
  const pl = o(spec.priorityLevelConfiguration) ?? {};
  return `${T('FlowSchemaSpec')}{PriorityLevelConfiguration:${T('PriorityLevelConfigurationReference')}{Name:${s(pl.name)}}, MatchingPrecedence:${n(spec.matchingPrecedence)}, DistinguisherMethod:${ptr('FlowDistinguisherMethod', spec.distinguisherMethod)}, Rules:${slice('PolicyRulesWithSubjects', spec.rules, rules)}}`;
}

/** %#v of a flowcontrol.PriorityLevelConfigurationSpec. */
export function goSharpVOfPriorityLevelSpec(spec: Json): string {
  return `${T('PriorityLevelConfigurationSpec')}{Type:${s(spec.type)}, Limited:${ptr('LimitedPriorityLevelConfiguration', spec.limited)}, Exempt:${ptr('ExemptPriorityLevelConfiguration', spec.exempt)}}`;
}
