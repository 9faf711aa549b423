import { createHash, timingSafeEqual } from 'node:crypto';

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * tokenMatches compares the SHA-256 digests of both in constant time: digests
 * are always 32 bytes, so neither the time nor an early length check tells a
 * caller how long the token is. The token never appears in an error or a log.
 */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  return timingSafeEqual(sha256(given ?? ''), sha256(token));
}
