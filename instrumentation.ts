/**
 * Next.js calls register() once when the server starts. refwatch starts its
 * runtime (cluster, engine, change log) there, in the Node.js runtime only and
 * never while `next build` collects pages.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  if (process.env.NEXT_PHASE === 'phase-production-build') return;
  const { ensureRuntime } = await import('./server/runtime');
  try {
    await ensureRuntime();
  } catch (e) {
    // A bad configuration is reported once, clearly; route handlers retry and answer 503 meanwhile.
    console.error(`refwatch: could not start: ${e instanceof Error ? e.message : String(e)}`);
  }
}
