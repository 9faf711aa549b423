/**
 * CliError is a failure the CLI reports in one line and an exit code:
 * 2 for a usage or connection error (the message names the flag or argument
 * and what to type), 1 when what was asked about is not there or not resolved.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** EXIT: the exit codes scripts rely on. */
export const EXIT = { resolved: 0, unresolved: 1, usage: 2 } as const;

/** describeCause turns a network error into the few words a person recognises ("connection refused"). */
export function describeCause(e: unknown): string {
  const cause =
    (e as { cause?: { code?: string; message?: string } })?.cause ?? (e as { code?: string; message?: string });
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timed out';
    default:
      if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return 'timed out';
      return cause?.message ?? (e instanceof Error ? e.message : String(e));
  }
}
