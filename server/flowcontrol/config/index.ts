// The live API Priority and Fairness configuration: the FlowSchema and PriorityLevelConfiguration
// objects kept in memory from the commit stream (listed at start, then every committed change), and
// classification as kube's configController.Match does
// (k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go): schemas in order of
// matchingPrecedence then name; a schema whose priority level does not exist is dangling and
// skipped; the first that matches decides. As kube's digestConfigObjects does, a missing mandatory
// object (the exempt and catch-all FlowSchemas and priority levels) is imagined from its bootstrap
// definition (uid ""), so that classification always ends somewhere. Objects are compiled and
// sorted once per change, never per request.
import type { EventLog } from '../../storage/log/event-log.ts';
import type { GenericStore } from '../../registry/store.ts';
import type { ResourceCatalog } from '../../schema/catalog.ts';
import type { ResourceInfo } from '../../schema/types.ts';
import type { Classification, FlowControlConfiguration, FlowSchemaRef, PriorityLevelRef, PriorityLevelSpec, RequestDigest } from '../types.ts';
import { FLOW_SCHEMA_CATCH_ALL, FLOW_SCHEMA_EXEMPT, PRIORITY_LEVEL_CATCH_ALL, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, type FlowSchemaSpec } from './bootstrap.ts';
import { compileRules, SubjectIndex, type RuleMatcher } from './matcher.ts';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';
/** The log's qualified resources of the two kinds. */
const FLOW_SCHEMAS_RESOURCE = `flowschemas.${FLOWCONTROL_GROUP}`;
const PRIORITY_LEVELS_RESOURCE = `prioritylevelconfigurations.${FLOWCONTROL_GROUP}`;

/** What classification keeps of a FlowSchema object. */
interface FlowSchemaEntry {
  ref: FlowSchemaRef;
  priorityLevelName: string;
  rules: RuleMatcher[];
  /** The spec as stored, to tell a change of the spec from one of the status. */
  specJson: string;
}

interface StoredObject {
  metadata?: { name?: unknown; uid?: unknown };
  spec?: unknown;
}

function flowSchemaEntry(name: string, uid: string, spec: FlowSchemaSpec): FlowSchemaEntry {
  const method = spec.distinguisherMethod?.type;
  return {
    ref: { name, uid, matchingPrecedence: spec.matchingPrecedence ?? 0, ...(method ? { distinguisherMethod: method } : {}) },
    priorityLevelName: spec.priorityLevelConfiguration?.name ?? '',
    rules: compileRules(spec),
    specJson: JSON.stringify(spec),
  };
}

/** kube's FlowSchemaSequence order: matchingPrecedence, then name. */
function byPrecedenceThenName(a: FlowSchemaEntry, b: FlowSchemaEntry): number {
  return a.ref.matchingPrecedence - b.ref.matchingPrecedence || (a.ref.name < b.ref.name ? -1 : a.ref.name > b.ref.name ? 1 : 0);
}

const IMAGINED_FLOW_SCHEMAS = new Map(MANDATORY_FLOW_SCHEMAS.map((fs) => [fs.metadata.name, flowSchemaEntry(fs.metadata.name, '', fs.spec)]));
const IMAGINED_PRIORITY_LEVELS = new Map(MANDATORY_PRIORITY_LEVELS.map((pl): [string, PriorityLevelRef] => [pl.metadata.name, { name: pl.metadata.name, uid: '', spec: pl.spec }]));

/** A schema in classification order with its priority level resolved. */
interface Candidate {
  entry: FlowSchemaEntry;
  priorityLevel: PriorityLevelRef;
  /** The classification, made once, when the schema distinguishes no flows. */
  undistinguished?: Classification;
}

/** Every rule of every candidate, in matching order. */
interface Matching {
  rules: { rule: RuleMatcher; candidate: Candidate }[];
  subjects: SubjectIndex;
}

export class FlowControlConfig implements FlowControlConfiguration {
  private readonly flowSchemas = new Map<string, FlowSchemaEntry>();
  private readonly levels = new Map<string, PriorityLevelRef & { specJson: string }>();
  private readonly listeners: (() => void)[] = [];
  /** Rebuilt on the first use after a change. */
  private matching: Matching | undefined;
  private catchAll: Candidate | undefined;
  private levelList: PriorityLevelRef[] | undefined;

  /** `initialFlowSchemas`/`initialPriorityLevels`: what is stored at start; `log`: every commit after. */
  constructor(initialFlowSchemas: readonly unknown[], initialPriorityLevels: readonly unknown[], log?: EventLog) {
    for (const o of initialFlowSchemas) this.setFlowSchema(o);
    for (const o of initialPriorityLevels) this.setPriorityLevel(o);
    log?.onCommit((events) => {
      let changed = false;
      for (const e of events) {
        if (e.key.res === FLOW_SCHEMAS_RESOURCE) changed = (e.type === 'DELETED' ? this.flowSchemas.delete(e.key.name) : this.setFlowSchema(e.object)) || changed;
        else if (e.key.res === PRIORITY_LEVELS_RESOURCE) changed = (e.type === 'DELETED' ? this.levels.delete(e.key.name) : this.setPriorityLevel(e.object)) || changed;
      }
      if (changed) this.changed();
    });
  }

  /** The configuration from what `store` holds now and every commit to `log` after. */
  static of(store: GenericStore, catalog: ResourceCatalog, log: EventLog): FlowControlConfig {
    const info = (resource: string): ResourceInfo => catalog.lookup(FLOWCONTROL_GROUP, 'v1', resource)!;
    return new FlowControlConfig(store.listReadable(info('flowschemas'), undefined), store.listReadable(info('prioritylevelconfigurations'), undefined), log);
  }

  classify(digest: RequestDigest): Classification {
    const { rules, subjects } = this.matching ?? this.rebuild();
    // The first rule (schemas in order, then each schema's rules) whose subjects and request match.
    const matched = subjects.match(digest.user);
    for (let i = 0; i < rules.length; i++) {
      if ((matched[i >>> 5] & (1 << (i & 31))) !== 0 && rules[i].rule.matchesRequest(digest)) return classification(rules[i].candidate, digest);
    }
    // Nothing matched (a user in neither system:authenticated nor system:unauthenticated): catch-all.
    return classification(this.catchAll!, digest);
  }

  /** The stored levels and, as kube's dispatcher has them, a missing mandatory one imagined (uid ""). */
  priorityLevels(): readonly PriorityLevelRef[] {
    if (!this.matching) this.rebuild();
    return this.levelList!;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    this.matching = undefined;
    this.levelList = undefined;
    for (const l of this.listeners) l();
  }

  /** Returns whether the schema's uid or spec changed (a status write is no change of configuration). */
  private setFlowSchema(o: unknown): boolean {
    const obj = o as StoredObject;
    const name = obj.metadata?.name;
    if (typeof name !== 'string') return false;
    const uid = typeof obj.metadata?.uid === 'string' ? obj.metadata.uid : '';
    const spec = (obj.spec ?? {}) as FlowSchemaSpec;
    const old = this.flowSchemas.get(name);
    if (old && old.ref.uid === uid && old.specJson === JSON.stringify(spec)) return false;
    this.flowSchemas.set(name, flowSchemaEntry(name, uid, spec));
    return true;
  }

  private setPriorityLevel(o: unknown): boolean {
    const obj = o as StoredObject;
    const name = obj.metadata?.name;
    if (typeof name !== 'string') return false;
    const uid = typeof obj.metadata?.uid === 'string' ? obj.metadata.uid : '';
    const spec = (obj.spec ?? {}) as PriorityLevelSpec;
    const specJson = JSON.stringify(spec);
    const old = this.levels.get(name);
    if (old && old.uid === uid && old.specJson === specJson) return false;
    this.levels.set(name, { name, uid, spec, specJson });
    return true;
  }

  private rebuild(): Matching {
    const levels = new Map<string, PriorityLevelRef>();
    for (const [name, pl] of this.levels) levels.set(name, { name, uid: pl.uid, spec: pl.spec });
    for (const [name, pl] of IMAGINED_PRIORITY_LEVELS) if (!levels.has(name)) levels.set(name, pl);
    const entries = [...this.flowSchemas.values()];
    for (const name of [FLOW_SCHEMA_EXEMPT, FLOW_SCHEMA_CATCH_ALL]) if (!this.flowSchemas.has(name)) entries.push(IMAGINED_FLOW_SCHEMAS.get(name)!);
    entries.sort(byPrecedenceThenName);
    const candidates: Candidate[] = [];
    for (const entry of entries) {
      const priorityLevel = levels.get(entry.priorityLevelName);
      // Dangling: the schema names no priority level there is.
      if (priorityLevel) candidates.push(candidate(entry, priorityLevel));
    }
    this.catchAll = candidates.find((c) => c.entry.ref.name === FLOW_SCHEMA_CATCH_ALL) ?? candidate(IMAGINED_FLOW_SCHEMAS.get(FLOW_SCHEMA_CATCH_ALL)!, levels.get(PRIORITY_LEVEL_CATCH_ALL)!);
    this.levelList = [...levels.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const rules = candidates.flatMap((c) => c.entry.rules.map((rule) => ({ rule, candidate: c })));
    this.matching = { rules, subjects: new SubjectIndex(rules.map((r) => r.rule.subjects)) };
    return this.matching;
  }
}

function candidate(entry: FlowSchemaEntry, priorityLevel: PriorityLevelRef): Candidate {
  return { entry, priorityLevel, ...(entry.ref.distinguisherMethod ? {} : { undistinguished: { flowSchema: entry.ref, priorityLevel, flowDistinguisher: '' } }) };
}

/** kube's computeFlowDistinguisher; a schema without a method shares one classification (nothing to allocate). */
function classification(c: Candidate, digest: RequestDigest): Classification {
  if (c.undistinguished) return c.undistinguished;
  const method = c.entry.ref.distinguisherMethod;
  return { flowSchema: c.entry.ref, priorityLevel: c.priorityLevel, flowDistinguisher: method === 'ByUser' ? digest.user.name : method === 'ByNamespace' ? digest.namespace : '' };
}
