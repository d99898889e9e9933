// The layering of server/ (README "How it is built"), checked by `npm run check:layers`:
// a folder imports only folders below it, and nothing imports in a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle: split the shared part out below both', from: { path: '^server' }, to: { circular: true } },
    { name: 'go-is-the-ground-floor', severity: 'error', comment: "server/go/ is Go's vocabulary: it imports nothing of hearth's", from: { path: '^server/go/' }, to: { path: '^server/', pathNot: '^server/go/' } },
    { name: 'util-is-the-ground-floor', severity: 'error', comment: 'server/util/ imports only server/go/', from: { path: '^server/util/' }, to: { path: '^server/', pathNot: '^server/(go|util)/' } },
    { name: 'webhook-client-beside-the-ground-floor', severity: 'error', comment: 'server/webhook/ (the kubeconfig-named webhook client that authentication/, authorization/ and admission/ share) imports only go/ and util/', from: { path: '^server/webhook/' }, to: { path: '^server/', pathNot: '^server/(go|util|webhook)/' } },
    { name: 'errors-on-the-ground-floor', severity: 'error', comment: 'server/errors.ts (ApiError and the Status builders, used by every floor) imports only go/, util/, validation/', from: { path: '^server/errors\\.ts$' }, to: { path: '^server/', pathNot: '^server/(go|util|validation)/' } },
    { name: 'validation-above-go-only', severity: 'error', comment: 'server/validation/ (field errors, names, object meta, formats) imports only go/ and util/', from: { path: '^server/validation/' }, to: { path: '^server/', pathNot: '^server/(go|util|validation)/' } },
    { name: 'schema-below-registry', severity: 'error', comment: 'server/schema/ (the type model) imports only go/, util/, validation/', from: { path: '^server/schema/' }, to: { path: '^server/', pathNot: '^server/(go|util|validation|schema)/' } },
    { name: 'storage-below-registry', severity: 'error', comment: 'server/storage/ knows rows and the log, not kinds or HTTP', from: { path: '^server/storage/' }, to: { path: '^server/(registry|http|admission|authentication|authorization|controllers|pki|flowcontrol|audit)/' } },
    { name: 'storage-log-above-no-database', severity: 'error', comment: "server/storage/log/ (the log's semantics) and rows/ reach a database only through log/backend.ts's interface", from: { path: '^server/storage/(log|rows)/' }, to: { path: '^server/storage/(sqlite|backup|data-dir)/' } },
    { name: 'storage-rows-below-log', severity: 'error', comment: 'server/storage/rows/ (how a row is stored and checked) knows nothing of the log', from: { path: '^server/storage/rows/' }, to: { path: '^server/storage/log/' } },
    { name: 'request-path-below-http', severity: 'error', comment: 'authentication/, flowcontrol/, authorization/, admission/ and audit/ are called by http/ and never import it: each declares the little it reads of a request', from: { path: '^server/(authentication|flowcontrol|authorization|admission|audit)/' }, to: { path: '^server/http/' } },
    { name: 'metrics-beside-the-ground-floor', severity: 'error', comment: 'server/metrics/ (the Prometheus registry every floor registers on) imports only go/ and util/', from: { path: '^server/metrics/' }, to: { path: '^server/', pathNot: '^server/(go|util|metrics)/' } },
    { name: 'logging-beside-the-ground-floor', severity: 'error', comment: "server/logging/ (hearth's own log: -v levels, text or json) imports only go/ and util/", from: { path: '^server/logging/' }, to: { path: '^server/', pathNot: '^server/(go|util|logging)/' } },
    { name: 'flowcontrol-below-http', severity: 'error', comment: 'server/flowcontrol/ (API Priority and Fairness) is called by http/ and never imports it, nor the floors after it on the path', from: { path: '^server/flowcontrol/' }, to: { path: '^server/(http|authorization|admission|controllers)/' } },
    { name: 'audit-below-http', severity: 'error', comment: 'server/audit/ (policy, events, backends) is called by http/ and never imports it', from: { path: '^server/audit/' }, to: { path: '^server/(http|admission|controllers)/' } },
    { name: 'registry-below-http', severity: 'error', comment: 'server/registry/ never imports server/http/', from: { path: '^server/registry/' }, to: { path: '^server/http/' } },
    { name: 'cel-is-self-contained', severity: 'error', comment: 'server/registry/crd/cel/ (CEL for x-kubernetes-validations) imports only go/, util/, validation/, schema/ and itself', from: { path: '^server/registry/crd/cel/' }, to: { path: '^server/', pathNot: '^server/(go|util|validation|schema|registry/crd/cel)/' } },
    { name: 'cel-through-its-index', severity: 'error', comment: 'the rest of the server uses server/registry/crd/cel/ through its index.ts', from: { path: '^server/', pathNot: '^server/registry/crd/cel/' }, to: { path: '^server/registry/crd/cel/', pathNot: '^server/registry/crd/cel/index\\.ts$' } },
    { name: 'bufbuild-gaps-stay-small', severity: 'error', comment: 'cel/bufbuild-gaps/ (workarounds for @bufbuild/cel, each to be deleted when the library closes its gap) imports only cel/ast.ts, cel/values.ts and itself', from: { path: '^server/registry/crd/cel/bufbuild-gaps/' }, to: { path: '^server/', pathNot: '^server/registry/crd/cel/(bufbuild-gaps/|ast\\.ts$|values\\.ts$)' } },
    { name: 'apply-fieldpath-below-typed', severity: 'error', comment: 'registry/apply/fieldpath/ (paths, sets, FieldsV1) knows no schema: it imports only go/ and util/', from: { path: '^server/registry/apply/fieldpath/' }, to: { path: '^server/', pathNot: '^server/(go|util)/|^server/registry/apply/fieldpath/' } },
    { name: 'apply-typed-below-manager', severity: 'error', comment: 'registry/apply/typed/ (the schema view) imports only fieldpath/, schema/, go/ and util/', from: { path: '^server/registry/apply/typed/' }, to: { path: '^server/', pathNot: '^server/(go|util|schema)/|^server/registry/apply/(fieldpath|typed)/' } },
    { name: 'apply-is-self-contained', severity: 'error', comment: 'registry/apply/ is pure: it imports nothing else of the registry, nor storage or HTTP', from: { path: '^server/registry/apply/' }, to: { path: '^server/(registry|storage|http|admission|authentication|authorization|controllers|pki)/', pathNot: '^server/registry/apply/' } },
    { name: 'kinds-not-crd', severity: 'error', comment: 'built-in kinds (server/registry/kinds/) never import CRD code: the CRD kind itself is registry/crd/strategy.ts', from: { path: '^server/registry/kinds/' }, to: { path: '^server/registry/crd/' } },
    { name: 'kinds-below-the-store', severity: 'error', comment: "built-in kinds import only go/, util/, validation/, schema/, errors.ts and registry's generic pieces below the store; pods' eviction REST (like kube's pod/storage/eviction.go) works through the store, which never imports it", from: { path: '^server/registry/kinds/', pathNot: '^server/registry/kinds/core/pods/eviction\\.ts$' }, to: { path: '^server/(http|storage|admission|authentication|authorization|controllers|pki)/|^server/registry/store\\.ts$|^server/registry/(watch|printers|patch)/' } },
    { name: 'controllers-are-clients', severity: 'error', comment: 'controllers use the registry, not HTTP', from: { path: '^server/controllers/' }, to: { path: '^server/http/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^server',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
