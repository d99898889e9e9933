// Objects the validation tests write again and again: a Pod with one container and the spec
// fields under test, and a Deployment whose pod template carries the same spec.

/** A container named `name` running nginx, with `more` of its fields. */
export const container = (name: string, more: Record<string, unknown> = {}): Record<string, any> => ({ name, image: 'nginx', ...more });

/** A Pod named `name` with one container `c`; `spec`'s fields are added to (or replace) its spec. */
export const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container('c')], ...spec } });

/** A Deployment named `name` selecting `app: name`, whose pod template has `pod`'s spec. */
export const deployment = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [container('c')], ...spec } } },
});
