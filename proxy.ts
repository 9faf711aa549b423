import { NextResponse, type NextRequest } from 'next/server';
import { accessRefusal, processAccessPolicy } from './server/http/guard';

/**
 * proxy runs before every route, pages and static assets included (no
 * matcher on purpose): a request whose Host header does not name this server
 * is refused, and data needs the token when refwatch is bound beyond loopback.
 * See docs/api.md, "Access".
 */
export function proxy(request: NextRequest): Response {
  return accessRefusal(request, processAccessPolicy) ?? NextResponse.next();
}
