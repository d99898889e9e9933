// Go's os.PathError text (`open PATH: no such file or directory`), which kube prints as it is
// when a file named by a flag or a kubeconfig cannot be read.

/** `<op> <path>: <reason>` for a Node file-system error, in the words of Go's syscall errors. */
export function goPathError(op: 'open' | 'stat' | 'read', path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EISDIR') return `read ${path}: is a directory`;
  const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'not a directory' : code === 'ELOOP' ? 'too many levels of symbolic links' : (e as Error).message;
  return `${op} ${path}: ${reason}`;
}
