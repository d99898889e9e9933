// registry/watch/: the store's watch. The hub subscribes to the log's commits and hands them,
// in batches, to each open watch of the resource; a watch checks its options, writes its
// initial state or a replay, filters by namespace and selectors, and presents every object as
// a GET in the watched version serves it (converted, defaulted, in kube's order: the store's
// presentedCopy), to a sink that frames and encodes the events (http/handlers/watch.ts). It
// imports storage/, schema/ and the rest of registry/, never http/.
export { WatchHub } from './hub.ts';
export { ResourceWatch, type WatchOptions } from './resource-watch.ts';
export { PresentedObject, type WatchSink, type ObjectEventType, type NoticeType } from './events.ts';
