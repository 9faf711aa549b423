import { toResponse } from '@/server/http/errors';
import type { Runtime } from '@/server/runtime';

export const BASE = 'http://127.0.0.1:3000';

export interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** callHandler calls an API function as its route would, errors included, and reads the answer. */
export async function callHandler(
  rt: Runtime,
  fn: (rt: Runtime, req: Request) => Response | Promise<Response>,
  path: string,
  init: RequestInit = {},
): Promise<Answer> {
  let res: Response;
  try {
    res = await fn(rt, new Request(BASE + path, init));
  } catch (e) {
    res = toResponse(e);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}
