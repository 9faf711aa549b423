/**
 * follow aborts child when parent aborts, until the returned unlink is
 * called: one listener per child, removed when the child's work ends.
 * AbortSignal.any would instead leave a composite signal on a long-lived
 * parent for each child (a watch, a lease attempt, a reconnect).
 */
export function follow(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  const onAbort = () => child.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return () => parent.removeEventListener('abort', onAbort);
}
