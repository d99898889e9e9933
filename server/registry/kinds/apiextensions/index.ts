// apiextensions.k8s.io: the CustomResourceDefinition kind's defaults (names, conversion strategy,
// webhook port). Its strategy and validation are CRD code: registry/crd/strategy.ts.
import { servicePort443, setPtr, zero, type Defaulters } from '../../defaulting.ts';
import { isPlainObject } from '../../../util/json.ts';

/** CustomResourceDefinitions, by definition. */
export const customResourceDefinitionDefaults: Defaulters = {
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec': (s) => {
    if (isPlainObject(s.names)) {
      if (zero(s.names.singular) && typeof s.names.kind === 'string') s.names.singular = s.names.kind.toLowerCase();
      if (zero(s.names.listKind) && typeof s.names.kind === 'string' && s.names.kind) s.names.listKind = `${s.names.kind}List`;
    }
    setPtr(s, 'conversion', { strategy: 'None' });
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference': servicePort443,
};
