// kube's CEL limits: the size a value can have in a request (celconfig.MaxRequestSizeBytes), which
// bounds unbounded lists, maps and strings in cost estimates, and the estimated-cost budgets
// apiextensions holds a CRD's rules to (per expression, and for the whole schema).
export const StaticEstimatedCostLimit = 10_000_000;
export const StaticEstimatedCRDCostLimit = 100_000_000;
export const MaxRequestSizeBytes = 3 * 1024 * 1024;
