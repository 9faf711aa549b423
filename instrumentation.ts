/**
 * Next.js calls register() once when the server starts. refwatch checks its
 * configuration (an invalid or unsafe one stops the process) and starts its
 * runtime (cluster, engine, change log) there, in the Node.js runtime only and
 * never while `next build` collects pages.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  if (process.env.NEXT_PHASE === 'phase-production-build') return;
  const { startConfig, warnAboutExposure } = await import('./server/startup');
  warnAboutExposure(startConfig());
  const { ensureRuntime } = await import('./server/runtime');
  try {
    await ensureRuntime();
  } catch (e) {
    // A cluster that cannot be reached yet is reported once, clearly; route handlers retry and answer 503 meanwhile.
    console.error(`refwatch: could not start: ${e instanceof Error ? e.message : String(e)}`);
  }
}
