import 'server-only';
import { ApiError, handle } from './http/errors';
import { guardAccess, processAccessPolicy } from './http/guard';
import { ensureRuntime, type Runtime } from './runtime';

/**
 * route adapts an API function to a Next.js route handler: it checks the
 * Host header and token (proxy.ts does so first; this is the second line),
 * waits for the runtime (503 with the reason while it cannot start) and turns
 * every error into an API error response.
 */
export function route(
  fn: (rt: Runtime, req: Request) => Response | Promise<Response>,
): (req: Request) => Promise<Response> {
  return handle(async (req: Request) => {
    guardAccess(req, processAccessPolicy());
    let rt: Runtime;
    try {
      rt = await ensureRuntime();
    } catch (e) {
      throw new ApiError(
        503,
        'NotRunning',
        `refwatch is not running: ${e instanceof Error ? e.message : String(e)}`,
        undefined,
        { 'retry-after': '5' },
      );
    }
    return fn(rt, req);
  });
}

/** probe adapts a handler that needs no runtime (the liveness probe); the Host header is still checked. */
export function probe(fn: () => Response): (req: Request) => Promise<Response> {
  return handle((req: Request) => {
    guardAccess(req, processAccessPolicy());
    return fn();
  });
}
