import 'server-only';
import { ApiError, handle } from './http/errors';
import { ensureRuntime, type Runtime } from './runtime';

/**
 * route adapts an API function to a Next.js route handler: it waits for the
 * runtime (503 with the reason while it cannot start) and turns every error
 * into an API error response.
 */
export function route(fn: (rt: Runtime, req: Request) => Response | Promise<Response>): (req: Request) => Promise<Response> {
  return handle(async (req: Request) => {
    let rt: Runtime;
    try {
      rt = await ensureRuntime();
    } catch (e) {
      throw new ApiError(503, 'NotRunning', `refwatch is not running: ${e instanceof Error ? e.message : String(e)}`, undefined, { 'retry-after': '5' });
    }
    return fn(rt, req);
  });
}
