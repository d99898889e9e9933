// --enable/--disable-admission-plugins as kube-apiserver reads them, and the configuration file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enabledAdmissionPlugins, ALL_ORDERED_PLUGINS } from '../../../server/admission/plugins.ts';
import { readAdmissionConfiguration } from '../../../server/admission/config.ts';

const HAS = new Set(['NamespaceLifecycle', 'ServiceAccount', 'NodeRestriction', 'CertificateSubjectRestriction', 'AlwaysPullImages', 'ResourceQuota']);

test('the default set is kube default-on plugins hearth has, plus NodeRestriction, in kube order', () => {
  assert.deepEqual(enabledAdmissionPlugins([], [], HAS), ['NamespaceLifecycle', 'ServiceAccount', 'NodeRestriction', 'CertificateSubjectRestriction', 'ResourceQuota']);
});

test('enabled plugins run in kube order whatever order the flag names them', () => {
  assert.deepEqual(enabledAdmissionPlugins(['ResourceQuota', 'AlwaysPullImages'], ['ServiceAccount', 'NodeRestriction'], HAS), ['NamespaceLifecycle', 'AlwaysPullImages', 'CertificateSubjectRestriction', 'ResourceQuota']);
  assert.ok(ALL_ORDERED_PLUGINS.indexOf('ResourceQuota') > ALL_ORDERED_PLUGINS.indexOf('ValidatingAdmissionWebhook'));
});

test('unknown names, overlaps and plugins hearth lacks are refused with every problem named', () => {
  assert.throws(() => enabledAdmissionPlugins(['Bogus', 'PodNodeSelector', 'ServiceAccount'], ['Nope', 'ServiceAccount'], HAS), {
    message: [
      'enable-admission-plugins plugin "Bogus" is unknown',
      'disable-admission-plugins plugin "Nope" is unknown',
      '[ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped',
      'enable-admission-plugins: [PodNodeSelector] not supported by hearth yet',
    ].join('\n'),
  });
});

test('the configuration file gives each plugin its inline configuration or its file, relative to it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
  writeFileSync(join(dir, 'quota.yaml'), 'apiVersion: resourcequota.admission.k8s.io/v1\nkind: Configuration\nlimitedResources: []\n');
  const file = join(dir, 'admission.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: baseline}',
      '- name: ResourceQuota',
      '  path: quota.yaml',
    ].join('\n'),
  );
  const config = readAdmissionConfiguration(file);
  assert.deepEqual(config.configurationOf('PodSecurity'), { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' } });
  assert.deepEqual(config.configurationOf('ResourceQuota'), { apiVersion: 'resourcequota.admission.k8s.io/v1', kind: 'Configuration', limitedResources: [] });
  assert.equal(config.configurationOf('LimitRanger'), undefined);
});

test('a missing file, a wrong kind and a missing plugin file stop the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
  assert.throws(() => readAdmissionConfiguration(join(dir, 'none.yaml')), { message: `unable to read admission control configuration from "${join(dir, 'none.yaml')}": open ${join(dir, 'none.yaml')}: no such file or directory` });
  const wrong = join(dir, 'wrong.yaml');
  writeFileSync(wrong, 'apiVersion: v1\nkind: ConfigMap\n');
  assert.throws(() => readAdmissionConfiguration(wrong), { message: 'no kind "ConfigMap" is registered for version "v1"' });
  const dangling = join(dir, 'dangling.yaml');
  writeFileSync(dangling, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: gone.yaml\n');
  assert.throws(() => readAdmissionConfiguration(dangling), /couldn't open admission plugin configuration .*gone\.yaml: open .*gone\.yaml: no such file or directory/);
});
