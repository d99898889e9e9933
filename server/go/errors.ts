// Go's k8s.io/apimachinery/pkg/util/errors, as its messages read.

/** utilerrors.NewAggregate(errs).Error(): "" for none, one message as it is, several (each once) in brackets joined by ", ". */
export function aggregateErrors(messages: readonly string[]): string {
  if (messages.length === 0) return '';
  if (messages.length === 1) return messages[0];
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}
