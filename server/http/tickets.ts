import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a stream ticket may wait before its connection opens. */
export const TICKET_TTL_MS = 60_000;

export interface IssuedTicket {
  ticket: string;
  /** Epoch ms after which the ticket no longer opens a stream. */
  expiresAt: number;
}

/** Why a ticket does not open a stream, said so a person knows what to do. */
export type TicketProblem = 'malformed' | 'forged' | 'expired' | 'used';

export const TICKET_PROBLEM: Record<TicketProblem, string> = {
  malformed: 'the ticket is not one this server issues',
  forged: 'the ticket was not issued by this server, or the server was restarted with another token since',
  expired: `the ticket has expired (a ticket lasts ${TICKET_TTL_MS / 1000} s)`,
  used: 'the ticket has already opened a stream (a ticket opens one)',
};

export interface TicketOptions {
  ttlMs?: number;
  now?: () => number;
}

const b64 = (buf: Buffer) => buf.toString('base64url');

/**
 * StreamTickets issues and redeems the stream's tickets: short-lived,
 * read-only credentials that a browser's EventSource, which cannot send an
 * Authorization header, puts in the stream's URL instead of the long-lived
 * token. A ticket is `<expiry>.<nonce>.<HMAC>`, signed with a key derived
 * from the server's token, so any part of the process can check it without
 * shared state; redeeming it records its nonce until it expires, so it opens
 * one connection. Tickets are accepted on GET /api/v1/stream only.
 */
export class StreamTickets {
  private readonly key: Buffer;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** Redeemed nonces and when they expire; nothing older than a ticket's life is kept. */
  private readonly used = new Map<string, number>();

  constructor(secret: string, opts: TicketOptions = {}) {
    this.key = createHash('sha256').update(`refwatch stream ticket\0${secret}`).digest();
    this.ttlMs = opts.ttlMs ?? TICKET_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  issue(): IssuedTicket {
    const expiresAt = this.now() + this.ttlMs;
    const body = `${expiresAt}.${b64(randomBytes(18))}`;
    return { ticket: `${body}.${this.sign(body)}`, expiresAt };
  }

  /** check says why the ticket would not open a stream, or undefined if it would; it does not use it up. */
  check(ticket: string): TicketProblem | undefined {
    const parts = ticket.split('.');
    if (parts.length !== 3 || !/^\d{1,16}$/.test(parts[0]!)) return 'malformed';
    const body = `${parts[0]}.${parts[1]}`;
    const mac = Buffer.from(parts[2]!, 'base64url');
    const want = Buffer.from(this.sign(body), 'base64url');
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return 'forged';
    if (this.now() > Number(parts[0])) return 'expired';
    if (this.used.has(parts[1]!)) return 'used';
    return undefined;
  }

  /** redeem uses the ticket up for the connection it opens; it says why not, as check does. */
  redeem(ticket: string): TicketProblem | undefined {
    const problem = this.check(ticket);
    if (problem) return problem;
    this.forgetExpired();
    const [expiry, nonce] = ticket.split('.');
    this.used.set(nonce!, Number(expiry));
    return undefined;
  }

  /** The number of redeemed tickets remembered, which never outgrows one ticket lifetime's connections. */
  get remembered(): number {
    this.forgetExpired();
    return this.used.size;
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [nonce, expiry] of this.used) if (now > expiry) this.used.delete(nonce);
  }

  private sign(body: string): string {
    return b64(createHmac('sha256', this.key).update(body).digest());
  }
}

const KEY = Symbol.for('refwatch.streamTickets');
type GlobalWithTickets = typeof globalThis & { [KEY]?: { secret: string; tickets: StreamTickets } };

/**
 * processStreamTickets is this process's ticket office. It lives on globalThis
 * because Next loads the proxy and each route in bundles of their own, and a
 * ticket issued by one route must be redeemed once by another. Without a
 * token the key is a random one of this process.
 */
export function processStreamTickets(token: string | undefined): StreamTickets {
  const g = globalThis as GlobalWithTickets;
  const secret = token ?? g[KEY]?.secret ?? b64(randomBytes(32));
  if (g[KEY]?.secret !== secret) g[KEY] = { secret, tickets: new StreamTickets(secret) };
  return g[KEY].tickets;
}
