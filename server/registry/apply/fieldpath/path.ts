// Field paths: a list of path elements, how kube prints one, and the path of a walk (PathStack)
// that set builders and error messages read.
import { fieldPE, pathElementString, type PathElement } from './element.ts';
import type { Named } from './serialize-pe.ts';

export type FieldPath = readonly PathElement[];

/** `.spec.template.spec.containers[name="nginx"].image` */
export function pathString(path: FieldPath): string {
  return path.map(pathElementString).join('');
}

/** A path from field names, e.g. fieldPath('spec', 'replicas'). */
export function fieldPath(...names: string[]): FieldPath {
  return names.map(fieldPE);
}

/** The path of a walk: names and elements by depth, and a stamp per push so builders know their levels. */
export class PathStack {
  names: string[] = [];
  pes: PathElement[] = [];
  stamps: number[] = [0];
  depth = 0;
  private counter = 0;

  push(n: Named): void {
    this.names[this.depth] = n.name;
    this.pes[this.depth] = n.pe;
    this.depth++;
    this.stamps[this.depth] = ++this.counter;
  }

  pop(): void {
    this.depth--;
  }

  path(): PathElement[] {
    return this.pes.slice(0, this.depth);
  }
}

/** Where a walk is, for error messages: its stack, or the path elements so far (copied when an error is made). */
export type PathSource = PathStack | readonly (PathElement | string)[];

/** The path a source stands for (a string stands for a field). */
export function snapshot(src: PathSource): FieldPath {
  if (src instanceof PathStack) return src.path();
  return src.map((x) => (typeof x === 'string' ? fieldPE(x) : x));
}
