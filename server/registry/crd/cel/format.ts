// kube's format library (k8s.io/apiserver/pkg/cel/library/format.go): format.dns1123Label() ...
// format.datetime(), format.named() and <format>.validate(), with apimachinery's messages.
import { celFunc, celMethod, celList } from '@bufbuild/cel';
import { parseRequestURIError } from '../../../go/url.ts';
import { FORMAT_CHECKS } from '../../../validation/formats.ts';
import { isQualifiedName, isValidLabelValue, validateName } from '../../../validation/names.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { optNone, optOf } from './bufbuild-gaps/optional-types.ts';
import { MAP, STRING } from './values.ts';

/** The named formats of kube's format library and their validations (apimachinery's messages). */
export const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: (s) => validateName(s, 'dns1123Label'),
  dns1123Subdomain: (s) => validateName(s, 'dns1123Subdomain'),
  dns1035Label: (s) => validateName(s, 'dns1035Label'),
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (s) => validateName(s, 'dns1123Label', true),
  dns1123SubdomainPrefix: (s) => validateName(s, 'dns1123Subdomain', true),
  dns1035LabelPrefix: (s) => validateName(s, 'dns1035Label', true),
  labelValue: isValidLabelValue,
  uri: (s) => {
    const e = parseRequestURIError(s);
    return e === undefined ? [] : [e];
  },
  uuid: (s) => (FORMAT_CHECKS.uuid(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (FORMAT_CHECKS.byte(s) ? [] : ['invalid base64']),
  date: (s) => (FORMAT_CHECKS.date(s) ? [] : ['invalid date']),
  datetime: (s) => (FORMAT_CHECKS.datetime(s) ? [] : ['invalid datetime']),
};
const formatValue = (name: string) => tagged('format', { name });

export const FORMAT_LIBRARY = [
  ...Object.keys(FORMATS).map((name) => celFunc(`format.${name}`, [], MAP, () => formatValue(name))),
  celFunc('format.named', [STRING], MAP, (name: string) => (Object.prototype.hasOwnProperty.call(FORMATS, name) ? optOf(formatValue(name)) : optNone())),
  celMethod('validate', MAP, [STRING], MAP, function (s: string) {
    const errs = FORMATS[String(expectTag(this, 'format', 'validate').get('name'))](s);
    return errs.length === 0 ? optNone() : optOf(celList(errs));
  }),
];
