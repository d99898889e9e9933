// ValidatePodSpec's security rules, in kube-apiserver 1.36's words and order: the pod's security
// context (ids, shareProcessNamespace with hostPID, sysctls and the host namespaces they may not
// reach, the change policies, seccomp and AppArmor profiles, Windows options), each container's
// (ids, procMount, allowPrivilegeEscalation against privileged and CAP_SYS_ADMIN, profiles,
// Windows options) where validateContainerCommon checks it, host ports with hostNetwork (a Pod's
// and a template's rule), hostProcess containers, user namespaces beside the host's,
// hostnameOverride, the OS and the fields each OS refuses. Templates are checked at their paths;
// nothing refused is written; pods using these fields well are created.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { container, deployment, pod } from '../../helpers/builders.ts';
import { DNS1123_SUBDOMAIN } from '../../helpers/kube-messages.ts';

// Without ServiceAccount admission: a pod naming an invalid ServiceAccount here is to meet validation,
// not the 403 of a ServiceAccount that cannot exist (kube's integration tests disable the plugin too).
const s = useTestServer({ options: { disableAdmissionPlugins: ['ServiceAccount'] } });

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const causes = (name: string, spec: Record<string, unknown>) => invalidCauses(s, 'POST', PODS, pod(name, spec));
const absent = async (path: string) => assert.equal((await s.request('GET', path)).status, 404, `${path} was stored`);

const SC = 'spec.securityContext';
const ID_RANGE = (v: number) => `Invalid value: ${v}: must be between 0 and 2147483647, inclusive`;
const RFC1123_SUBDOMAIN = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: ${DNS1123_SUBDOMAIN}`;
const SYSCTL_NAME = (v: string) => `Invalid value: ${JSON.stringify(v)}: must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`;
const NOT_FOR_WINDOWS = 'Forbidden: cannot be set for a windows pod';
const NO_USERNS = 'Forbidden: when `hostUsers` is false';

test("the pod's security context: ids in range, shareProcessNamespace not with hostPID, the three policies", async () => {
  assert.deepEqual(
    await causes('ps1', {
      shareProcessNamespace: true,
      hostPID: true,
      securityContext: {
        fsGroup: -1,
        runAsUser: 2147483648,
        runAsGroup: -5,
        supplementalGroups: [1, -2, 3000000000],
        fsGroupChangePolicy: 'Sometimes',
        supplementalGroupsPolicy: 'Loose',
        // (MountOption needs the SELinuxMount gate, off in 1.36)
        seLinuxChangePolicy: 'MountOption',
      },
    }),
    [
      [`${SC}.fsGroup`, ID_RANGE(-1)],
      [`${SC}.runAsUser`, ID_RANGE(2147483648)],
      [`${SC}.runAsGroup`, ID_RANGE(-5)],
      [`${SC}.supplementalGroups[1]`, ID_RANGE(-2)],
      [`${SC}.supplementalGroups[2]`, ID_RANGE(3000000000)],
      // (kube keeps shareProcessNamespace in the internal security context, hence the path)
      [`${SC}.shareProcessNamespace`, 'Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled'],
      [`${SC}.fsGroupChangePolicy`, 'Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"'],
      [`${SC}.supplementalGroupsPolicy`, 'Unsupported value: "Loose": supported values: "Merge", "Strict"'],
      [`${SC}.seLinuxChangePolicy`, 'Unsupported value: "MountOption": supported values: "Recursive"'],
    ],
  );
  await absent(`${PODS}/ps1`);
});

test('sysctls: named, well formed, once; none of a namespace shared with the host (slash names normalized, * prefixes cut)', async () => {
  const T = `${SC}.sysctls`;
  const long = 'a'.repeat(254);
  assert.deepEqual(
    await causes('sy1', {
      hostNetwork: true,
      hostIPC: true,
      securityContext: {
        sysctls: [
          { name: '', value: '1' },
          { name: 'Kernel.Bad', value: '1' },
          { name: 'kernel.shm_rmid_forced', value: '1' },
          { name: 'net.ipv4.ip_forward', value: '1' },
          { name: 'net.ipv4.ip_forward', value: '1' },
          { name: 'net/ipv4/conf/eth0.100/rp_filter', value: '1' },
          { name: 'fs.mqueue.msg_max', value: '1' },
          { name: 'kernel.shmfoo', value: '1' },
          { name: 'kernel.msgmax', value: '1' },
          { name: 'net.core.*', value: '1' },
          { name: long, value: '1' },
          { name: 'kernel.msg*', value: '1' },
        ],
      },
    }),
    [
      [`${T}[0].name`, 'Required value'],
      [`${T}[1].name`, SYSCTL_NAME('Kernel.Bad')],
      [`${T}[2].name`, `Invalid value: "kernel.shm_rmid_forced": may not be specified when 'hostIPC' is true`],
      [`${T}[3].name`, `Invalid value: "net.ipv4.ip_forward": may not be specified when 'hostNetwork' is true`],
      [`${T}[4].name`, 'Duplicate value: "net.ipv4.ip_forward"'],
      [`${T}[4].name`, `Invalid value: "net.ipv4.ip_forward": may not be specified when 'hostNetwork' is true`],
      [`${T}[5].name`, `Invalid value: "net/ipv4/conf/eth0.100/rp_filter": may not be specified when 'hostNetwork' is true`],
      [`${T}[6].name`, `Invalid value: "fs.mqueue.msg_max": may not be specified when 'hostIPC' is true`],
      // (kernel.shmfoo is in no namespace: only the names kube lists are)
      [`${T}[8].name`, `Invalid value: "kernel.msgmax": may not be specified when 'hostIPC' is true`],
      [`${T}[9].name`, SYSCTL_NAME('net.core.*')],
      [`${T}[9].name`, `Invalid value: "net.core.*": may not be specified when 'hostNetwork' is true`],
      [`${T}[10].name`, SYSCTL_NAME(long)],
      // (a name is cut at its first '*' to find its namespace: kernel.msg is an IPC one)
      [`${T}[11].name`, SYSCTL_NAME('kernel.msg*')],
      [`${T}[11].name`, `Invalid value: "kernel.msg*": may not be specified when 'hostIPC' is true`],
    ],
  );
  await absent(`${PODS}/sy1`);
  // Without the host's namespaces the same names are the pod's own to set.
  const ok = await s.request('POST', PODS, {
    body: pod('sy2', { securityContext: { sysctls: [{ name: 'net.ipv4.ip_forward', value: '1' }, { name: 'kernel.shm_rmid_forced', value: '1' }] } }),
  });
  assert.equal(ok.status, 201, ok.text);
});

test('seccomp and AppArmor profiles: a known type, a localhost profile only for Localhost, relative and unpadded', async () => {
  const SP = `${SC}.seccompProfile`;
  const AP = `${SC}.appArmorProfile`;
  const CSC = 'spec.containers';
  assert.deepEqual(
    await causes('pr1', {
      securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '/profiles/../x.json' }, appArmorProfile: { type: 'Localhost', localhostProfile: ' padded' } },
      containers: [
        container('a', { securityContext: { seccompProfile: { type: '', localhostProfile: 'x.json' }, appArmorProfile: { type: '' } } }),
        container('b', { securityContext: { seccompProfile: { type: 'Bogus' }, appArmorProfile: { type: 'Bogus' } } }),
        container('c', { securityContext: { seccompProfile: { type: 'Localhost' }, appArmorProfile: { type: 'Localhost' } } }),
        container('d', { securityContext: { seccompProfile: { type: 'RuntimeDefault', localhostProfile: 'p.json' }, appArmorProfile: { type: 'Unconfined', localhostProfile: 'p' } } }),
        container('e', { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: '' } } }),
        container('f', { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'x'.repeat(4096) } } }),
        // (an empty seccomp localhost profile is relative and has no '..': kube takes it)
        container('g', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '' } } }),
      ],
    }),
    [
      [`${CSC}[0].securityContext.seccompProfile.type`, 'Required value: type is required when seccompProfile is set'],
      // (kube prints the profile with %#v; the pointer it holds as an address, hearth as its value)
      [`${CSC}[0].securityContext.seccompProfile.localhostProfile`, 'Invalid value: core.SeccompProfile{Type:"", LocalhostProfile:(*string)("x.json")}: can only be set when seccomp type is Localhost'],
      [`${CSC}[0].securityContext.appArmorProfile.type`, 'Required value: type is required when appArmorProfile is set'],
      [`${CSC}[1].securityContext.seccompProfile.type`, 'Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"'],
      [`${CSC}[1].securityContext.appArmorProfile.type`, 'Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"'],
      [`${CSC}[2].securityContext.seccompProfile.localhostProfile`, 'Required value: must be set when seccomp type is Localhost'],
      [`${CSC}[2].securityContext.appArmorProfile.localhostProfile`, 'Required value: must be set when AppArmor type is Localhost'],
      [`${CSC}[3].securityContext.seccompProfile.localhostProfile`, 'Invalid value: core.SeccompProfile{Type:"RuntimeDefault", LocalhostProfile:(*string)("p.json")}: can only be set when seccomp type is Localhost'],
      [`${CSC}[3].securityContext.appArmorProfile.localhostProfile`, 'Invalid value: "p": can only be set when AppArmor type is Localhost'],
      [`${CSC}[4].securityContext.appArmorProfile.localhostProfile`, 'Required value: must be set when AppArmor type is Localhost'],
      [`${CSC}[5].securityContext.appArmorProfile.localhostProfile`, 'Too long: may not be more than 4095 bytes'],
      [`${SP}.localhostProfile`, 'Invalid value: "/profiles/../x.json": must be a relative path'],
      [`${SP}.localhostProfile`, `Invalid value: "/profiles/../x.json": must not contain '..'`],
      [`${AP}.localhostProfile`, 'Invalid value: " padded": must not be padded with whitespace'],
    ],
  );
  await absent(`${PODS}/pr1`);
  // A profile without its type is the schema walk's Required value, reported once (kube adds
  // "type is required when seccompProfile is set").
  assert.deepEqual(await causes('pr2', { securityContext: { seccompProfile: {} } }), [[`${SP}.type`, 'Required value']]);
});

test('Windows options: a credential spec name that is a subdomain, a credential spec of 1 byte to 64 KiB, a [DOMAIN\\]USER name', async () => {
  const W = `${SC}.windowsOptions`;
  const user = (i: number) => `spec.containers[${i}].securityContext.windowsOptions.runAsUserName`;
  const names = ['', 'bad\u0001', '.bad\\user*', 'DOMAIN\\', '. .', 'x'.repeat(105), `${'d'.repeat(256)}\\u`];
  const bigSpec = 'x'.repeat(64 * 1024 + 1);
  assert.deepEqual(
    await causes('wo1', {
      securityContext: { windowsOptions: { gmsaCredentialSpecName: 'Bad_Name', gmsaCredentialSpec: '', runAsUserName: 'a\\b\\c' } },
      containers: [...names.map((n, i) => container(`c${i}`, { securityContext: { windowsOptions: { runAsUserName: n } } })), container('big', { securityContext: { windowsOptions: { gmsaCredentialSpec: bigSpec } } })],
    }),
    [
      [user(0), 'Invalid value: "": runAsUserName cannot be an empty string'],
      [user(1), 'Invalid value: "bad\\x01": runAsUserName cannot contain control characters'],
      [user(2), `Invalid value: ${JSON.stringify(names[2])}: runAsUserName's Domain doesn't match the NetBios nor the DNS format`],
      [user(2), `Invalid value: ${JSON.stringify(names[2])}: runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`],
      [user(3), `Invalid value: ${JSON.stringify(names[3])}: runAsUserName's User cannot be empty`],
      [user(4), `Invalid value: ". .": runAsUserName's User cannot contain only periods or spaces`],
      [user(5), `Invalid value: ${JSON.stringify(names[5])}: runAsUserName's User length must not be longer than 104 characters`],
      [user(6), `Invalid value: ${JSON.stringify(names[6])}: runAsUserName's Domain length must be under 256 characters`],
      [user(6), `Invalid value: ${JSON.stringify(names[6])}: runAsUserName's Domain doesn't match the NetBios nor the DNS format`],
      ['spec.containers[7].securityContext.windowsOptions.gmsaCredentialSpec', `Invalid value: "${bigSpec}": gmsaCredentialSpec size must be under 64 KiB`],
      [`${W}.gmsaCredentialSpecName`, RFC1123_SUBDOMAIN('Bad_Name')],
      [`${W}.gmsaCredentialSpec`, 'Invalid value: "": gmsaCredentialSpec cannot be an empty string'],
      [`${W}.runAsUserName`, 'Invalid value: "a\\\\b\\\\c": runAsUserName cannot contain more than one backslash'],
    ],
  );
  await absent(`${PODS}/wo1`);
});

test("a container's security context: ids, procMount, allowPrivilegeEscalation: false against privileged and CAP_SYS_ADMIN", async () => {
  // kube prints the whole security context with %#v; the pointers in it as addresses, hearth as their values.
  const sc = (caps: string) =>
    `core.SecurityContext{Capabilities:(*core.Capabilities)(core.Capabilities{Add:[]core.Capability{${caps}}, Drop:[]core.Capability(nil)}), Privileged:(*bool)(true), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(false), ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}`;
  const caps = '"CAP_SYS_ADMIN", "NET_ADMIN", "CAP_SYS_ADMIN"';
  assert.deepEqual(
    await causes('cs1', {
      containers: [
        container('a', { securityContext: { runAsUser: -1, runAsGroup: 2147483648, procMount: 'Hidden' } }),
        container('b', { securityContext: { procMount: 'Unmasked' } }),
        container('c', { securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { add: ['CAP_SYS_ADMIN', 'NET_ADMIN', 'CAP_SYS_ADMIN'] } } }),
        // (kube looks for CAP_SYS_ADMIN spelled so; it checks neither readOnlyRootFilesystem nor seLinuxOptions)
        container('d', { securityContext: { allowPrivilegeEscalation: false, privileged: false, capabilities: { add: ['SYS_ADMIN'] }, readOnlyRootFilesystem: true, seLinuxOptions: { type: 'spc_t' } } }),
      ],
      initContainers: [container('i', { securityContext: { runAsUser: -3 } })],
    }),
    [
      ['spec.containers[0].securityContext.runAsUser', ID_RANGE(-1)],
      ['spec.containers[0].securityContext.runAsGroup', ID_RANGE(2147483648)],
      ['spec.containers[0].securityContext.procMount', 'Unsupported value: "Hidden": supported values: "Default", "Unmasked"'],
      ['spec.containers[1].securityContext.procMount', 'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`'],
      ['spec.containers[2].securityContext', `Invalid value: ${sc(caps)}: cannot set \`allowPrivilegeEscalation\` to false and \`privileged\` to true`],
      ['spec.containers[2].securityContext', `Invalid value: ${sc(caps)}: cannot set \`allowPrivilegeEscalation\` to false and \`capabilities.Add\` CAP_SYS_ADMIN`],
      ['spec.containers[2].securityContext', `Invalid value: ${sc(caps)}: cannot set \`allowPrivilegeEscalation\` to false and \`capabilities.Add\` CAP_SYS_ADMIN`],
      ['spec.initContainers[0].securityContext.runAsUser', ID_RANGE(-3)],
    ],
  );
  await absent(`${PODS}/cs1`);
});

test("a container's security context is checked last of validateContainerCommon: after the pull policy and resources, before the name's uniqueness and the probes", async () => {
  const probe = { exec: { command: ['true'] }, successThreshold: 2 };
  assert.deepEqual(
    await causes('co1', {
      containers: [container('web'), container('web', { imagePullPolicy: 'Sometimes', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } }, securityContext: { runAsUser: -1 }, livenessProbe: probe })],
      initContainers: [container('web', { securityContext: { runAsGroup: -1 }, livenessProbe: probe })],
    }),
    [
      ['spec.containers[1].imagePullPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
      ['spec.containers[1].resources.requests', 'Invalid value: "2": must be less than or equal to cpu limit of 1'],
      ['spec.containers[1].securityContext.runAsUser', ID_RANGE(-1)],
      ['spec.containers[1].name', 'Duplicate value: "web"'],
      ['spec.containers[1].livenessProbe.successThreshold', 'Invalid value: 2: must be 1'],
      ['spec.initContainers[0].securityContext.runAsGroup', ID_RANGE(-1)],
      ['spec.initContainers[0].name', 'Duplicate value: "web"'],
      ['spec.initContainers[0].livenessProbe', 'Forbidden: may not be set for init containers without restartPolicy=Always'],
    ],
  );
  await absent(`${PODS}/co1`);
});

test("hostNetwork: a Pod's containers' hostPorts equal their containerPorts (0 is defaulted to it); init containers are not checked", async () => {
  assert.deepEqual(
    await causes('hn1', {
      hostNetwork: true,
      restartPolicy: 'Sometimes',
      containers: [container('a', { ports: [{ containerPort: 80 }, { containerPort: 443, hostPort: 8443 }] })],
      initContainers: [container('i', { ports: [{ containerPort: 9000, hostPort: 9001 }], securityContext: { runAsUser: -1 } })],
    }),
    [
      ['spec.initContainers[0].securityContext.runAsUser', ID_RANGE(-1)],
      ['spec.containers[0].ports[1].hostPort', 'Invalid value: 8443: must match `containerPort` when `hostNetwork` is true'],
      ['spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ],
  );
  await absent(`${PODS}/hn1`);
  const ok = await s.request('POST', PODS, { body: pod('hn2', { hostNetwork: true, containers: [container('a', { ports: [{ containerPort: 80 }, { containerPort: 443, hostPort: 443 }] })] }) });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json().spec.containers[0].ports.map((p: any) => p.hostPort), [80, 443]);
});

test('hostUsers: false: no host network, PID or IPC namespace, no volume devices', async () => {
  const devices = [{ name: 'data', devicePath: '/dev/xvda' }];
  assert.deepEqual(
    await causes('hu1', {
      hostUsers: false,
      hostNetwork: true,
      hostPID: true,
      hostIPC: true,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      containers: [container('c', { volumeDevices: devices })],
      initContainers: [container('i', { volumeDevices: devices })],
    }),
    [
      ['spec.hostNetwork', NO_USERNS],
      // (kube names these two in Go's case)
      ['spec.HostPID', NO_USERNS],
      ['spec.HostIPC', NO_USERNS],
      ['spec.initContainers[0].volumeDevices', NO_USERNS],
      ['spec.containers[0].volumeDevices', NO_USERNS],
    ],
  );
  await absent(`${PODS}/hu1`);
});

test("hostProcess: a container's agrees with the pod's; with any, all are and the pod uses the host network", async () => {
  assert.deepEqual(
    await causes('hp1', {
      securityContext: { windowsOptions: { hostProcess: true } },
      containers: [container('a', { securityContext: { windowsOptions: { hostProcess: false } } }), container('b')],
    }),
    [
      ['spec.containers[0].securityContext.windowsOptions.hostProcess', 'Invalid value: false: pod hostProcess value must be identical if both are specified, was true'],
      ['spec', 'Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers'],
      ['spec.hostNetwork', 'Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers'],
    ],
  );
  await absent(`${PODS}/hp1`);
});

test('hostnameOverride: a subdomain of at most 64 bytes, not with setHostnameAsFQDN or hostNetwork', async () => {
  const name = `Bad_Host${'x'.repeat(60)}`;
  assert.deepEqual(await causes('ho1', { hostnameOverride: name, setHostnameAsFQDN: true, hostNetwork: true }), [
    ['spec.hostnameOverride', 'Forbidden: may not be specified when setHostnameAsFQDN is true'],
    ['spec.hostnameOverride', 'Forbidden: may not be specified when hostNetwork is true'],
    ['spec.hostnameOverride', 'Too long: may not be more than 64 bytes'],
    ['spec.hostnameOverride', RFC1123_SUBDOMAIN(name)],
  ]);
  await absent(`${PODS}/ho1`);
});

test('OS: a name, linux or windows; a linux pod has no Windows options, a windows pod none of the Linux fields', async () => {
  assert.deepEqual(await causes('os1', { os: { name: '' } }), [['spec.os.name', 'Required value']]);
  assert.deepEqual(await causes('os2', { os: { name: 'plan9' } }), [['spec.os', 'Unsupported value: "plan9": supported values: "linux", "windows"']]);
  const windowsOptions = { runAsUserName: 'ContainerUser' };
  assert.deepEqual(
    await causes('os3', { os: { name: 'linux' }, securityContext: { windowsOptions }, containers: [container('c', { securityContext: { windowsOptions } })], initContainers: [container('i', { securityContext: { windowsOptions } })] }),
    [
      [`${SC}.windowsOptions`, 'Forbidden: windows options cannot be set for a linux pod'],
      ['spec.initContainers[0].securityContext.windowsOptions', 'Forbidden: windows options cannot be set for a linux pod'],
      ['spec.containers[0].securityContext.windowsOptions', 'Forbidden: windows options cannot be set for a linux pod'],
    ],
  );
  const C = 'spec.containers[0].securityContext';
  assert.deepEqual(
    await causes('os4', {
      os: { name: 'windows' },
      hostUsers: true,
      hostPID: true,
      hostIPC: true,
      shareProcessNamespace: false,
      securityContext: {
        appArmorProfile: { type: 'RuntimeDefault' },
        seLinuxOptions: { level: 's0' },
        seccompProfile: { type: 'RuntimeDefault' },
        fsGroup: 1,
        fsGroupChangePolicy: 'Always',
        sysctls: [{ name: 'kernel.domainname', value: 'example.com' }],
        runAsUser: 1,
        runAsGroup: 1,
        supplementalGroups: [],
        supplementalGroupsPolicy: 'Merge',
        seLinuxChangePolicy: 'Recursive',
        runAsNonRoot: true,
        windowsOptions,
      },
      containers: [
        container('c', {
          securityContext: {
            appArmorProfile: { type: 'RuntimeDefault' },
            seLinuxOptions: { level: 's0' },
            seccompProfile: { type: 'RuntimeDefault' },
            capabilities: { drop: ['ALL'] },
            readOnlyRootFilesystem: false,
            privileged: false,
            allowPrivilegeEscalation: true,
            procMount: 'Default',
            runAsUser: 1,
            runAsGroup: 1,
            runAsNonRoot: true,
            windowsOptions,
          },
        }),
      ],
    }),
    [
      [`${SC}.appArmorProfile`, NOT_FOR_WINDOWS],
      [`${SC}.seLinuxOptions`, NOT_FOR_WINDOWS],
      ['spec.hostUsers', NOT_FOR_WINDOWS],
      ['spec.hostPID', NOT_FOR_WINDOWS],
      ['spec.hostIPC', NOT_FOR_WINDOWS],
      [`${SC}.seccompProfile`, NOT_FOR_WINDOWS],
      [`${SC}.fsGroup`, NOT_FOR_WINDOWS],
      [`${SC}.fsGroupChangePolicy`, NOT_FOR_WINDOWS],
      [`${SC}.sysctls`, NOT_FOR_WINDOWS],
      ['spec.shareProcessNamespace', NOT_FOR_WINDOWS],
      [`${SC}.runAsUser`, NOT_FOR_WINDOWS],
      [`${SC}.runAsGroup`, NOT_FOR_WINDOWS],
      [`${SC}.supplementalGroups`, NOT_FOR_WINDOWS],
      [`${SC}.supplementalGroupsPolicy`, NOT_FOR_WINDOWS],
      [`${SC}.seLinuxChangePolicy`, NOT_FOR_WINDOWS],
      [`${C}.appArmorProfile`, NOT_FOR_WINDOWS],
      [`${C}.seLinuxOptions`, NOT_FOR_WINDOWS],
      [`${C}.seccompProfile`, NOT_FOR_WINDOWS],
      [`${C}.capabilities`, NOT_FOR_WINDOWS],
      [`${C}.readOnlyRootFilesystem`, NOT_FOR_WINDOWS],
      [`${C}.privileged`, NOT_FOR_WINDOWS],
      [`${C}.allowPrivilegeEscalation`, NOT_FOR_WINDOWS],
      [`${C}.procMount`, NOT_FOR_WINDOWS],
      [`${C}.runAsUser`, NOT_FOR_WINDOWS],
      [`${C}.runAsGroup`, NOT_FOR_WINDOWS],
    ],
  );
  for (const name of ['os1', 'os2', 'os3', 'os4']) await absent(`${PODS}/${name}`);
});

test('the checks come in ValidatePodSpec order', async () => {
  assert.deepEqual(
    await causes('or1', {
      os: { name: 'windows' },
      hostUsers: false,
      hostNetwork: true,
      hostnameOverride: 'node-a',
      restartPolicy: 'Sometimes',
      serviceAccountName: 'Bad_SA',
      securityContext: { runAsGroup: -1 },
      topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      containers: [container('c', { ports: [{ containerPort: 80, hostPort: 81 }], securityContext: { runAsUser: -1 } })],
    }),
    [
      ['spec.containers[0].securityContext.runAsUser', ID_RANGE(-1)],
      ['spec.containers[0].ports[0].hostPort', 'Invalid value: 81: must match `containerPort` when `hostNetwork` is true'],
      ['spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
      [`${SC}.runAsGroup`, ID_RANGE(-1)],
      ['spec.topologySpreadConstraints[0].maxSkew', 'Invalid value: 0: must be greater than zero'],
      ['spec.hostNetwork', NO_USERNS],
      ['spec.hostnameOverride', 'Forbidden: may not be specified when hostNetwork is true'],
      ['spec.serviceAccountName', RFC1123_SUBDOMAIN('Bad_SA')],
      ['spec.hostUsers', NOT_FOR_WINDOWS],
      [`${SC}.runAsGroup`, NOT_FOR_WINDOWS],
      ['spec.containers[0].securityContext.runAsUser', NOT_FOR_WINDOWS],
    ],
  );
  await absent(`${PODS}/or1`);
});

test("a Deployment template gets the same checks at spec.template.spec; its hostPorts may be left 0", async () => {
  const T = 'spec.template.spec';
  assert.deepEqual(
    await invalidCauses(
      s,
      'POST',
      DEPLOYMENTS,
      deployment('d1', {
        hostNetwork: true,
        securityContext: { runAsUser: -1, sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        containers: [container('c', { ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 82 }], securityContext: { procMount: 'Unmasked' } })],
      }),
    ),
    [
      [`${T}.containers[0].securityContext.procMount`, 'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`'],
      [`${T}.containers[0].ports[1].hostPort`, 'Invalid value: 82: must match `containerPort` when `hostNetwork` is true'],
      [`${T}.securityContext.runAsUser`, ID_RANGE(-1)],
      [`${T}.securityContext.sysctls[0].name`, `Invalid value: "net.core.somaxconn": may not be specified when 'hostNetwork' is true`],
    ],
  );
  await absent(`${DEPLOYMENTS}/d1`);
  const ok = await s.request('POST', DEPLOYMENTS, { body: deployment('d2', { hostNetwork: true, containers: [container('c', { ports: [{ containerPort: 80 }] })] }) });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json().spec.template.spec.containers[0].ports[0].hostPort, undefined);
});

test('pods using these fields well are created as sent', async () => {
  const securityContext = {
    runAsUser: 1000,
    runAsGroup: 3000,
    runAsNonRoot: true,
    fsGroup: 2000,
    fsGroupChangePolicy: 'OnRootMismatch',
    supplementalGroups: [4000, 0, 2147483647],
    supplementalGroupsPolicy: 'Strict',
    seLinuxChangePolicy: 'Recursive',
    seLinuxOptions: { level: 's0:c123,c456' },
    sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '32768 60999' }, { name: 'kernel/shm_rmid_forced', value: '1' }],
    seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' },
    appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-apparmor-example-deny-write' },
  };
  const containers = [
    container('web', {
      ports: [{ containerPort: 80 }],
      securityContext: {
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
        // (Unmasked in a user namespace of the pod's own)
        procMount: 'Unmasked',
        runAsUser: 0,
        seccompProfile: { type: 'RuntimeDefault' },
        appArmorProfile: { type: 'Unconfined' },
      },
    }),
    // (privileged containers are allowed, as with --allow-privileged=true)
    container('debug', { securityContext: { privileged: true, capabilities: { add: ['CAP_SYS_ADMIN'] } } }),
  ];
  const initContainers = [container('init', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '' }, runAsGroup: 2147483647 } })];
  const spec = { os: { name: 'linux' }, hostUsers: false, shareProcessNamespace: true, hostnameOverride: 'node-a.example', securityContext, containers, initContainers };
  const r = await s.request('POST', PODS, { body: pod('linux', spec) });
  assert.equal(r.status, 201, r.text);
  const stored = (await s.request('GET', `${PODS}/linux`)).json().spec;
  assert.deepEqual(stored.securityContext, securityContext);
  assert.deepEqual(stored.containers.map((c: any) => c.securityContext), containers.map((c) => c.securityContext));
  assert.deepEqual(stored.initContainers[0].securityContext, initContainers[0].securityContext);
  for (const k of ['os', 'hostUsers', 'shareProcessNamespace', 'hostnameOverride']) assert.deepEqual(stored[k], spec[k as keyof typeof spec], k);

  // A Windows pod of hostProcess containers on the host network.
  const windows = {
    os: { name: 'windows' },
    hostNetwork: true,
    securityContext: { runAsNonRoot: true, windowsOptions: { hostProcess: true, runAsUserName: 'NT AUTHORITY\\SYSTEM', gmsaCredentialSpecName: 'gmsa-webapp', gmsaCredentialSpec: '{}' } },
    containers: [container('agent', { securityContext: { windowsOptions: { hostProcess: true, runAsUserName: 'corp.example.com\\svc' } } })],
  };
  const w = await s.request('POST', PODS, { body: pod('windows', windows) });
  assert.equal(w.status, 201, w.text);
  assert.deepEqual(w.json().spec.securityContext, windows.securityContext);
  assert.deepEqual(w.json().spec.containers[0].securityContext, windows.containers[0].securityContext);
});
