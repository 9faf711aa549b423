/**
 * apiErrorMessage reads the message of an API error answer
 * (`{error: {code, message}}`; older drafts used a bare `{message}`), or says
 * which status came back when the body carries none.
 */
export async function apiErrorMessage(res: Response, what: string): Promise<string> {
  try {
    const body = (await res.json()) as { message?: unknown; error?: { message?: unknown } | string };
    const e = body.error;
    const detail =
      typeof e === 'object' && e !== null && typeof e.message === 'string'
        ? e.message
        : typeof e === 'string'
          ? e
          : typeof body.message === 'string'
            ? body.message
            : '';
    if (detail) return detail;
  } catch {
    // a body that is not JSON carries nothing to show
  }
  return `${what} answered ${res.status}`;
}
