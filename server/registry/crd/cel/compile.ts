// Compilation of x-kubernetes-validations when a CRD is written (kube's schema/cel compilation and
// the CRD's cost checks): each rule and messageExpression is parsed (with the parser's gaps filled:
// bufbuild-gaps/), checked and costed (checker.ts), lowered and planned in the environment
// (environment.ts). The compiled rules of a schema are kept per CRD version and evaluated on every
// write (evaluate.ts).
import { plan } from '@bufbuild/cel';
import { goQuote } from '../../../go/strconv.ts';
import { re2Error } from '../../../go/regexp.ts';
import { isPlainObject } from '../../../util/json.ts';
import { childPath, forbiddenError, invalidError, type FieldError } from '../../../validation/field.ts';
import { renderIssues } from './ast.ts';
import { lowerForPlan } from './bufbuild-gaps/lowering.ts';
import { expandMacros } from './bufbuild-gaps/macros.ts';
import { applyOptionalSyntax, scanOptionalSyntax } from './bufbuild-gaps/optional-syntax.ts';
import { parseRule, syntaxIssue } from './bufbuild-gaps/parser.ts';
import { Checker } from './checker.ts';
import { costErrorMessage } from './cost.ts';
import { env } from './environment.ts';
import { validFieldPath } from './field-path.ts';
import { MaxRequestSizeBytes, StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit } from './limits.ts';
import { optionalOf, schemaDeclType, type CT, type Obj } from './types.ts';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** A planned rule or messageExpression (its variables by name: self and oldSelf for rules). */
type Program = (ctx: { self: unknown; oldSelf: unknown }) => unknown;

export interface CompiledExpr {
  program?: Program;
  error?: string;
  resultType?: CT;
  cost: number;
  usesOldSelf: boolean;
}

/** Parses, checks and plans one expression with self/oldSelf of the given types. */
function compileExpr(src: string, selfT: CT, oldSelfT: CT): CompiledExpr {
  return compileInScope(
    src,
    new Map<string, CT>([
      ['self', selfT],
      ['oldSelf', oldSelfT],
    ]),
  );
}

/**
 * Parses, checks and plans one expression whose variables have the given types (self/oldSelf for
 * x-kubernetes-validations; others for expression.ts). `parsed` is the checked AST, macros expanded.
 */
export function compileInScope(src: string, scope: Map<string, CT>, opts: { objectConstruction?: boolean } = {}): CompiledExpr & { parsed?: unknown } {
  let parsed: any;
  const syn = scanOptionalSyntax(src);
  try {
    parsed = parseRule(syn ? syn.text : src);
  } catch (e) {
    return { error: renderIssues(src, [syntaxIssue(e)]), cost: 0, usesOldSelf: false };
  }
  parsed.sourceInfo ??= { positions: {}, macroCalls: {} };
  if (syn) {
    const synIssues = applyOptionalSyntax(parsed, syn, src);
    if (synIssues.length) return { error: renderIssues(src, synIssues), cost: 0, usesOldSelf: false };
  }
  const macroIssues = expandMacros(parsed);
  if (macroIssues.length) return { error: renderIssues(src, macroIssues), cost: 0, usesOldSelf: false };
  const checker = new Checker(parsed.sourceInfo.positions, parsed.sourceInfo.macroCalls, opts.objectConstruction);
  const checked = checker.check(parsed.expr, scope);
  if (checker.issues.length) return { error: renderIssues(src, checker.issues), cost: checked.cost, usesOldSelf: checker.usesOldSelf };
  for (const r of checker.regexes) {
    const err = re2Error(r.pattern);
    if (err) return { error: `program instantiation failed: ${err}`, cost: 0, usesOldSelf: checker.usesOldSelf, resultType: checked.t };
  }
  lowerForPlan(parsed, checker.optChain);
  const program = plan(env(), parsed) as Program;
  return { program, resultType: checked.t, cost: checked.cost, usesOldSelf: checker.usesOldSelf, parsed };
}

interface CompiledRule {
  rule: ValidationRule;
  program: Program;
  messageProgram?: Program;
  transition: boolean;
  fieldPath: string;
}

/** Compiled rules of one schema node and, recursively, of its properties, items and map values. */
export interface CelNode {
  schema: Obj;
  isResourceRoot: boolean;
  rules: CompiledRule[];
  properties?: Map<string, CelNode>;
  items?: CelNode;
  additionalProperties?: CelNode;
}

export interface CompiledSchemaRules {
  /** Undefined when the schema has no x-kubernetes-validations anywhere. */
  root?: CelNode;
  /** Compile and cost errors, with paths under basePath. */
  errors: FieldError[];
  /** Sum of the estimated costs of all rules and messageExpressions (× cardinality). */
  totalCost: number;
}

export interface CompileRulesOptions {
  /** Path of the schema in the CRD, e.g. "spec.validation.openAPIV3Schema". */
  basePath: string;
  /** The schema is a resource root (default true). */
  isResourceRoot?: boolean;
  /** Nodes (by path) whose rules must not be compiled, e.g. because their schema is invalid. */
  skipNode?: (path: string) => boolean;
}

export function hasValidationRules(s: unknown): boolean {
  if (!isPlainObject(s)) return false;
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length > 0) return true;
  if (isPlainObject(s.properties) && Object.values(s.properties).some(hasValidationRules)) return true;
  return hasValidationRules(s.items) || hasValidationRules(s.additionalProperties);
}

/** Go's %#v of an apiextensions.ValidationRule, as kube prints the bad value of a rule error. */
export function goValidationRule(r: ValidationRule): string {
  const ptr = (set: boolean, type: string) => (set ? `(${type})(0xc000000000)` : `(${type})(nil)`);
  return (
    `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, ` +
    `MessageExpression:${goQuote(r.messageExpression ?? '')}, Reason:${ptr(r.reason !== undefined, '*apiextensions.FieldValueErrorReason')}, ` +
    `FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr(r.optionalOldSelf !== undefined, '*bool')}}`
  );
}

function asRules(v: unknown): ValidationRule[] {
  if (!Array.isArray(v)) return [];
  return v.map((r) => (isPlainObject(r) ? (r as ValidationRule) : { rule: '' }));
}

/**
 * Compiles every x-kubernetes-validations rule of a schema (call once per CRD version and keep
 * the result). Errors are the ones kube-apiserver reports when the CRD is written: compilation
 * failures, non-bool rules, messageExpression failures, estimated cost over budget, oldSelf on
 * uncorrelatable parts of the schema, optionalOldSelf without oldSelf, and the total cost.
 */
export function compileSchemaRules(schema: unknown, opts: CompileRulesOptions): CompiledSchemaRules {
  const errors: FieldError[] = [];
  const costs: { path: string; cost: number }[] = [];
  let total = 0;
  const observe = (path: string, cost: number) => {
    total += cost;
    if (cost >= StaticEstimatedCRDCostLimit / 100) costs.push({ path, cost });
  };

  const walk = (s: unknown, path: string, isResourceRoot: boolean, cardinality: number | null, uncorrelatable: string | undefined): CelNode | undefined => {
    if (!isPlainObject(s)) return undefined;
    const node: CelNode = { schema: s, isResourceRoot, rules: [] };
    const rules = asRules(s['x-kubernetes-validations']);
    if (rules.length > 0 && !(opts.skipNode?.(path) ?? false)) {
      const vpath = childPath(path, 'x-kubernetes-validations');
      const declType = schemaDeclType(s, isResourceRoot);
      if (!declType) {
        errors.push({
          reason: 'InternalError',
          field: vpath,
          message: `Internal error: rule declared on schema that does not support validation rules type: '${typeof s.type === 'string' ? s.type : ''}' x-kubernetes-preserve-unknown-fields: '${s['x-kubernetes-preserve-unknown-fields'] === true}'`,
        });
      } else {
        const card = cardinality ?? Math.floor(MaxRequestSizeBytes / (declType.min + 1));
        rules.forEach((rule, i) => {
          const rpath = `${vpath}[${i}]`;
          if (typeof rule.rule !== 'string' || rule.rule.trim() === '') return;
          const optional = rule.optionalOldSelf === true;
          const compiled = compileExpr(rule.rule, declType, optional ? optionalOf(declType) : declType);
          const cost = compiled.error ? 0 : compiled.cost * card;
          if (cost > StaticEstimatedCostLimit) errors.push(forbiddenError(`${rpath}.rule`, costErrorMessage('estimated rule cost', cost, StaticEstimatedCostLimit)));
          observe(`${rpath}.rule`, cost);
          if (compiled.error) {
            errors.push(invalidError(`${rpath}.rule`, goValidationRule(rule), `compilation failed: ${compiled.error}`.replace(/^compilation failed: program instantiation failed/, 'program instantiation failed')));
          } else if (compiled.resultType && compiled.resultType.k !== 'bool' && compiled.resultType.k !== 'dyn') {
            errors.push(invalidError(`${rpath}.rule`, goValidationRule(rule), 'cel expression must evaluate to a bool'));
            compiled.program = undefined;
          }
          let messageProgram: Program | undefined;
          let messageOk = true;
          if (compiled.program && typeof rule.messageExpression === 'string' && rule.messageExpression.trim() !== '') {
            const m = compileExpr(rule.messageExpression, declType, optional ? optionalOf(declType) : declType);
            if (m.error) {
              messageOk = false;
              errors.push(invalidError(`${rpath}.messageExpression`, goValidationRule(rule), m.error.startsWith('program instantiation failed') ? m.error.replace(/^program/, 'messageExpression') : `messageExpression compilation failed: ${m.error}`));
            } else if (m.resultType && m.resultType.k !== 'string' && m.resultType.k !== 'dyn') {
              messageOk = false;
              errors.push(invalidError(`${rpath}.messageExpression`, goValidationRule(rule), 'messageExpression must evaluate to a string'));
            } else {
              const mcost = m.cost * card;
              if (mcost > StaticEstimatedCostLimit) errors.push(forbiddenError(`${rpath}.messageExpression`, costErrorMessage('estimated messageExpression cost', mcost, StaticEstimatedCostLimit)));
              observe(`${rpath}.messageExpression`, mcost);
              messageProgram = m.program;
            }
          }
          if (compiled.program) {
            if (compiled.usesOldSelf) {
              if (uncorrelatable !== undefined) errors.push(invalidError(`${rpath}.rule`, goQuote(rule.rule), `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
            } else if (rule.optionalOldSelf !== undefined) {
              errors.push(invalidError(`${rpath}.optionalOldSelf`, String(rule.optionalOldSelf), 'may not be set if oldSelf is not used in rule'));
            }
          }
          if (compiled.program && messageOk) {
            const fp = typeof rule.fieldPath === 'string' && rule.fieldPath.trim() !== '' ? (validFieldPath(rule.fieldPath, s).path ?? '') : '';
            node.rules.push({ rule, program: compiled.program, messageProgram, transition: compiled.usesOldSelf, fieldPath: fp });
          }
        });
      }
    }
    const correlatableMap = s['x-kubernetes-map-type'] !== 'atomic';
    if (isPlainObject(s.properties)) {
      for (const [k, p] of Object.entries(s.properties)) {
        if (!hasValidationRules(p)) continue;
        const child = walk(p, `${path}.properties[${k}]`, isPlainObject(p) && p['x-kubernetes-embedded-resource'] === true, cardinality, uncorrelatable ?? (correlatableMap ? undefined : path));
        if (child) (node.properties ??= new Map()).set(k, child);
      }
    }
    if (isPlainObject(s.items) && hasValidationRules(s.items)) {
      const card = cardinality === null || typeof s.maxItems !== 'number' ? null : cardinality * Math.max(0, s.maxItems);
      const listMap = s['x-kubernetes-list-type'] === 'map';
      node.items = walk(s.items, `${path}.items`, s.items['x-kubernetes-embedded-resource'] === true, card, uncorrelatable ?? (listMap ? undefined : path));
    }
    if (isPlainObject(s.additionalProperties) && hasValidationRules(s.additionalProperties)) {
      const card = cardinality === null || typeof s.maxProperties !== 'number' ? null : cardinality * Math.max(0, s.maxProperties);
      node.additionalProperties = walk(s.additionalProperties, `${path}.additionalProperties`, s.additionalProperties['x-kubernetes-embedded-resource'] === true, card, uncorrelatable);
    }
    return node;
  };

  const root = hasValidationRules(schema) ? walk(schema, opts.basePath, opts.isResourceRoot !== false, 1, undefined) : undefined;
  if (total > StaticEstimatedCRDCostLimit) {
    costs.sort((a, b) => b.cost - a.cost);
    for (const c of costs.slice(0, 4)) errors.push(forbiddenError(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errors.push(forbiddenError(opts.basePath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, StaticEstimatedCRDCostLimit)));
  }
  return { root, errors, totalCost: total };
}
