// Each Pod Security check through the evaluator, with kube's reasons and details word for word
// (pod-security-admission/policy check_*_test.go) and the policy versions at which kube changes
// it: a check before its minimum version is absent, a later version of it replaces the earlier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Evaluator, aggregate, forbiddenDetail, forbiddenReason, type PodMeta, type PodSpec } from '../../../../server/admission/pod-security/checks.ts';
import { LATEST, type Level } from '../../../../server/admission/pod-security/api.ts';

const evaluator = new Evaluator();

/** The aggregated detail kube prints for one pod ('' when allowed). */
function detail(level: Level, version: number, spec: PodSpec, meta: PodMeta = {}): string {
  return forbiddenDetail(aggregate(evaluator.evaluatePod({ level, version }, meta, spec)));
}

/** A container that passes every restricted check, with overrides. */
function good(name: string, sc: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, image: 'i', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, ...sc } };
}
const spec = (o: Record<string, unknown>): PodSpec => o as PodSpec;

test('latest evaluates as the newest check version, and privileged checks nothing', () => {
  assert.equal(evaluator.maxVersion, 35);
  const p = spec({ hostNetwork: true, containers: [{ name: 'a', securityContext: { privileged: true } }] });
  assert.equal(detail('privileged', LATEST, p), '');
  assert.equal(detail('baseline', LATEST, p), detail('baseline', 35, p));
  assert.equal(detail('baseline', 99, p), detail('baseline', 35, p));
});

test('a bare privileged pod at restricted:latest: kube checks and order', () => {
  const p = spec({ containers: [{ name: 'nginx', image: 'nginx', securityContext: { privileged: true } }] });
  assert.equal(
    detail('restricted', LATEST, p),
    'privileged (container "nginx" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
  // The namespace warning lists reasons only.
  assert.equal(forbiddenReason(aggregate(evaluator.evaluatePod({ level: 'baseline', version: LATEST }, {}, p))), 'privileged');
});

test('privileged: init, then app, then ephemeral containers', () => {
  const p = spec({
    initContainers: [{ name: 'i', securityContext: { privileged: true } }],
    containers: [{ name: 'a', securityContext: { privileged: true } }, { name: 'b', securityContext: { privileged: false } }],
    ephemeralContainers: [{ name: 'e', securityContext: { privileged: true } }],
  });
  assert.equal(detail('baseline', 0, p), 'privileged (containers "i", "a", "e" must not set securityContext.privileged=true)');
  assert.equal(detail('baseline', LATEST, spec({ containers: [{ name: 'a', securityContext: { privileged: false } }] })), '');
});

test('capabilities_baseline: non-default capabilities, replaced at restricted from 1.22', () => {
  const p = spec({ containers: [good('a', { capabilities: { add: ['SYS_ADMIN', 'NET_RAW', 'CHOWN'] } }), good('b', { capabilities: { add: ['NET_RAW'] } })] });
  assert.equal(detail('baseline', LATEST, p), 'non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)');
  // restricted 1.21: no capabilities_restricted yet, so the baseline check stands
  assert.equal(detail('restricted', 21, p), 'non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)');
  assert.equal(
    detail('restricted', 22, p),
    'unrestricted capabilities (containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b" must not include "CHOWN", "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
  );
});

test('capabilities_restricted: drop ALL, only NET_BIND_SERVICE added; Windows pods exempt from 1.25', () => {
  const ok = spec({ containers: [good('a', { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })] });
  assert.equal(detail('restricted', LATEST, ok), '');
  const missing = spec({ os: { name: 'windows' }, containers: [good('a', { capabilities: undefined })] });
  assert.equal(detail('restricted', 24, missing), 'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"])');
  assert.equal(detail('restricted', 25, missing), '');
});

test('hostNamespaces: in kube order', () => {
  assert.equal(detail('baseline', 0, spec({ hostIPC: true, hostPID: true, hostNetwork: true, containers: [] })), 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)');
  assert.equal(detail('baseline', 0, spec({ hostNetwork: false, containers: [] })), '');
});

test('hostPathVolumes at baseline, restrictedVolumes overrides it at restricted', () => {
  const p = spec({ containers: [good('a')], volumes: [{ name: 'h1', hostPath: { path: '/' } }, { name: 'ok', emptyDir: {} }, { name: 'h2', hostPath: { path: '/x' } }] });
  assert.equal(detail('baseline', LATEST, p), 'hostPath volumes (volumes "h1", "h2")');
  assert.equal(detail('restricted', LATEST, p), 'restricted volume types (volumes "h1", "h2" use restricted volume type "hostPath")');
  assert.equal(detail('baseline', LATEST, spec({ volumes: [{ name: 'one', hostPath: {} }] })), 'hostPath volumes (volume "one")');
});

test('restrictedVolumes: the allowed sources pass; others named, or "unknown"', () => {
  const allowed = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'].map((k) => ({ name: k, [k]: {} }));
  assert.equal(detail('restricted', LATEST, spec({ containers: [good('a')], volumes: allowed })), '');
  const p = spec({ containers: [good('a')], volumes: [{ name: 'n', nfs: { server: 's', path: '/' } }, { name: 'u' }, { name: 'g', gitRepo: { repository: 'r' } }] });
  assert.equal(detail('restricted', 0, p).split(', runAsNonRoot')[0], 'restricted volume types (volumes "n", "u", "g" use restricted volume types "gitRepo", "nfs", "unknown")');
  assert.equal(detail('restricted', LATEST, spec({ containers: [good('a')], volumes: [{ name: 'c', cephfs: {} }] })), 'restricted volume types (volume "c" uses restricted volume type "cephfs")');
});

test('hostPorts: ports listed as Go sorts strings', () => {
  const p = spec({ containers: [{ name: 'a', ports: [{ containerPort: 1, hostPort: 8080 }, { containerPort: 2 }] }, { name: 'b', ports: [{ containerPort: 3, hostPort: 443 }] }] });
  assert.equal(detail('baseline', LATEST, p), 'hostPort (containers "a", "b" use hostPorts 443, 8080)');
  assert.equal(detail('baseline', LATEST, spec({ containers: [{ name: 'a', ports: [{ hostPort: 80 }] }] })), 'hostPort (container "a" uses hostPort 80)');
});

test('hostProbesAndHostLifecycle: from policy 1.34', () => {
  const p = spec({
    containers: [
      { name: 'b', livenessProbe: { httpGet: { host: 'example.com', port: 80 } }, lifecycle: { preStop: { tcpSocket: { host: '10.0.0.1', port: 1 } } } },
      { name: 'a', startupProbe: { tcpSocket: { host: 'example.com', port: 1 } } },
      { name: 'c', readinessProbe: { httpGet: { path: '/', port: 80 } } },
    ],
  });
  assert.equal(detail('baseline', 33, p), '');
  assert.equal(detail('baseline', 34, p), 'probe or lifecycle host (containers "a", "b" use probe or lifecycle hosts "10.0.0.1", "example.com")');
});

test('procMount: baseline relaxes user-namespaced pods from 1.35; restricted never does', () => {
  const p = spec({ hostUsers: false, containers: [good('a', { procMount: 'Unmasked' }), good('b', { procMount: 'Default' })] });
  assert.equal(detail('baseline', 34, p), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
  assert.equal(detail('baseline', 35, p), '');
  assert.equal(detail('restricted', 34, p), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
  assert.equal(detail('restricted', LATEST, p), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
  assert.equal(detail('baseline', LATEST, { ...p, hostUsers: true }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
});

test('seLinuxOptions: container_engine_t from 1.31; user and role named beside a bad type', () => {
  const engine = spec({ containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'container_engine_t' } } }] });
  assert.equal(detail('baseline', 30, engine), 'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t")');
  assert.equal(detail('baseline', 31, engine), '');
  const p = spec({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } }, containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'x_t', role: 'r' } } }] });
  assert.equal(detail('baseline', LATEST, p), 'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: types "spc_t", "x_t"; user may not be set; role may not be set)');
  // kube words nothing after the colon when only user or role is set
  assert.equal(detail('baseline', LATEST, spec({ containers: [{ name: 'a', securityContext: { seLinuxOptions: { user: 'u' } } }] })), 'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: )');
});

test('seccompProfile_baseline: annotations before 1.19, fields from 1.19', () => {
  const meta: PodMeta = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/a': 'docker/default' } };
  const p = spec({ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'a', securityContext: { seccompProfile: { type: 'Unconfined' } } }] });
  assert.equal(detail('baseline', 18, p, meta), 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
  assert.equal(detail('baseline', 19, p, meta), 'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")');
  assert.equal(detail('baseline', LATEST, spec({ containers: [{ name: 'a', securityContext: { seccompProfile: { type: 'Localhost' } } }] })), '');
});

test('seccompProfile_restricted: required from 1.19 (pod level covers containers), Windows exempt from 1.25', () => {
  const bare = spec({ containers: [good('a', { seccompProfile: undefined }), good('b', { seccompProfile: undefined })] });
  assert.equal(detail('restricted', 18, bare), '');
  assert.equal(detail('restricted', 19, bare), 'seccompProfile (pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  assert.equal(detail('restricted', 19, { ...bare, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }), '');
  const bad = spec({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [good('a', { seccompProfile: { type: 'Unconfined' } })] });
  assert.equal(detail('restricted', LATEST, bad), 'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")');
  assert.equal(detail('restricted', 24, { ...bare, os: { name: 'windows' } }), 'seccompProfile (pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  assert.equal(detail('restricted', 25, { ...bare, os: { name: 'windows' } }), '');
});

test('appArmorProfile: Unconfined fields and annotations', () => {
  const p = spec({ securityContext: { appArmorProfile: { type: 'Unconfined' } }, containers: [{ name: 'a', securityContext: { appArmorProfile: { type: 'Unconfined' } } }, { name: 'b', securityContext: { appArmorProfile: { type: 'Localhost' } } }] });
  assert.equal(detail('baseline', LATEST, p), 'forbidden AppArmor profile (pod and container "a" must not set AppArmor profile type to "Unconfined")');
  const meta: PodMeta = { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined', 'container.apparmor.security.beta.kubernetes.io/b': 'localhost/x' } };
  assert.equal(
    detail('baseline', 0, p, meta),
    'forbidden AppArmor profiles (pod and container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")',
  );
});

test('sysctls: the safe set grows at 1.27, 1.29 and 1.32', () => {
  const with_ = (name: string) => spec({ securityContext: { sysctls: [{ name, value: '1' }] }, containers: [] });
  assert.equal(detail('baseline', 26, with_('net.ipv4.ip_local_reserved_ports')), 'forbidden sysctls (net.ipv4.ip_local_reserved_ports)');
  assert.equal(detail('baseline', 27, with_('net.ipv4.ip_local_reserved_ports')), '');
  assert.equal(detail('baseline', 28, with_('net.ipv4.tcp_keepalive_time')), 'forbidden sysctls (net.ipv4.tcp_keepalive_time)');
  assert.equal(detail('baseline', 29, with_('net.ipv4.tcp_keepalive_time')), '');
  assert.equal(detail('baseline', 31, with_('net.ipv4.tcp_rmem')), 'forbidden sysctls (net.ipv4.tcp_rmem)');
  assert.equal(detail('baseline', 32, with_('net.ipv4.tcp_rmem')), '');
  const two = spec({ securityContext: { sysctls: [{ name: 'kernel.msgmax' }, { name: 'kernel.shm_rmid_forced' }, { name: 'net.core.somaxconn' }] }, containers: [] });
  assert.equal(detail('baseline', LATEST, two), 'forbidden sysctls (kernel.msgmax, net.core.somaxconn)');
});

test('windowsHostProcess', () => {
  const p = spec({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [{ name: 'a', securityContext: { windowsOptions: { hostProcess: true } } }] });
  assert.equal(detail('baseline', 0, p), 'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)');
});

test('allowPrivilegeEscalation: from 1.8, Windows pods exempt from 1.25', () => {
  const p = spec({ containers: [good('a', { allowPrivilegeEscalation: undefined }), good('b', { allowPrivilegeEscalation: true }), good('c')] });
  assert.equal(detail('restricted', 7, p), '');
  assert.equal(detail('restricted', 8, p), 'allowPrivilegeEscalation != false (containers "a", "b" must set securityContext.allowPrivilegeEscalation=false)');
  assert.equal(detail('restricted', 24, { ...p, os: { name: 'windows' } }).startsWith('allowPrivilegeEscalation != false'), true);
  assert.equal(detail('restricted', 25, { ...p, os: { name: 'windows' } }), '');
});

test('runAsNonRoot: explicit false, or unset without the pod-level true; user namespaces relaxed from 1.35', () => {
  const explicit = spec({ securityContext: { runAsNonRoot: false }, containers: [good('a', { runAsNonRoot: false }), good('b', { runAsNonRoot: undefined })] });
  assert.equal(detail('restricted', LATEST, explicit), 'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)');
  const implicit = spec({ containers: [good('a', { runAsNonRoot: undefined }), good('b')] });
  assert.equal(detail('restricted', 0, implicit), 'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)');
  assert.equal(detail('restricted', LATEST, { ...implicit, securityContext: { runAsNonRoot: true } }), '');
  assert.equal(detail('restricted', 34, { ...implicit, hostUsers: false }), 'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)');
  assert.equal(detail('restricted', 35, { ...implicit, hostUsers: false }), '');
});

test('runAsUser: from 1.23; user namespaces relaxed from 1.35', () => {
  const p = spec({ securityContext: { runAsUser: 0 }, containers: [good('a', { runAsUser: 0 }), good('b', { runAsUser: 1000 })] });
  assert.equal(detail('restricted', 22, p), '');
  assert.equal(detail('restricted', 23, p), 'runAsUser=0 (pod and container "a" must not set runAsUser=0)');
  assert.equal(detail('restricted', 34, { ...p, hostUsers: false }), 'runAsUser=0 (pod and container "a" must not set runAsUser=0)');
  assert.equal(detail('restricted', 35, { ...p, hostUsers: false }), '');
});

test('a pod meeting restricted passes every level and version', () => {
  const p = spec({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'a', image: 'i', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }], volumes: [{ name: 'v', secret: { secretName: 's' } }] });
  for (let v = 0; v <= 36; v++) for (const level of ['baseline', 'restricted'] as const) assert.equal(detail(level, v, p), '', `${level}:v1.${v}`);
});
