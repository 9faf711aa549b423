/**
 * The Host allow-list: refwatch answers only requests addressed to a name it
 * was told about, so a page on another site cannot reach it by pointing its
 * own name at refwatch's address (DNS rebinding). Names are compared without
 * the port, lower-cased, in the canonical form a URL parser gives them.
 */

/** A Host header: a name or IPv4 address, or a bracketed IPv6 address, each with an optional port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** canonical returns a host's name as a URL parser writes it (IPv6 in brackets, compressed), or undefined if it is not one. */
function canonical(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** hostnameOf reads the name of a Host header without its port; undefined when the header is missing or not a plain host. */
export function hostnameOf(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = HOST_HEADER.exec(header.trim());
  return m ? canonical(m[1]!) : undefined;
}

/** isLoopback: localhost, 127.0.0.0/8 or ::1, in any spelling a URL parser accepts. */
export function isLoopback(host: string): boolean {
  const name = canonical(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  return name === 'localhost' || name === '[::1]' || (name !== undefined && IPV4.test(name) && name.startsWith('127.'));
}

/** isWildcard: an address that binds every interface. */
export function isWildcard(host: string): boolean {
  return ['0.0.0.0', '::', '[::]'].includes(host.trim());
}

/**
 * hostEntryProblem says why an --allowed-hosts entry is not a hostname, an IP
 * address, or a `*.suffix` pattern; undefined when it is one.
 */
export function hostEntryProblem(entry: string): string | undefined {
  if (entry.includes('://') || entry.includes('/'))
    return `"${entry}" is a URL; give the host name alone, e.g. refwatch.example.com`;
  if (entry === '*') return `"*" would allow every host and undo the protection; list the names instead`;
  const ipv6 = entry.startsWith('[') || (entry.match(/:/g)?.length ?? 0) > 1;
  if (!ipv6 && entry.includes(':')) return `"${entry}" has a port; give the host without it (ports are not compared)`;
  if (ipv6)
    return canonical(entry.startsWith('[') ? entry : `[${entry}]`) ? undefined : `"${entry}" is not an IPv6 address`;
  const name = entry.startsWith('*.') ? entry.slice(2) : entry;
  if (IPV4.test(name))
    return !entry.startsWith('*.') && canonical(name) === name ? undefined : `"${entry}" is not an IPv4 address`;
  if (
    name.length > 253 ||
    !name
      .toLowerCase()
      .split('.')
      .every((l) => LABEL.test(l))
  )
    return `"${entry}" is not a host name (letters, digits, hyphens and dots) or an IP address`;
  return undefined;
}

/** The part of os.networkInterfaces() the allow-list reads. */
export type InterfaceAddresses = Readonly<Record<string, readonly { address: string }[] | undefined>>;

/** The bind address's own names: loopback needs nothing more, a wildcard means every interface address, else the address itself. */
function boundNames(bindHost: string, interfaces: InterfaceAddresses): string[] {
  if (isLoopback(bindHost)) return [];
  if (!isWildcard(bindHost)) return [bindHost];
  const out: string[] = [];
  for (const list of Object.values(interfaces))
    for (const a of list ?? []) if (!a.address.includes('%')) out.push(a.address);
  return out;
}

/**
 * HostAllowList decides whether a Host header names refwatch: loopback names
 * always, the bound address (every interface address when bound to a
 * wildcard, so probes to a Pod IP work), and the extra names given, where
 * `*.example.com` matches any name below example.com.
 */
export class HostAllowList {
  private readonly exact = new Set<string>();
  private readonly suffixes: string[] = [];

  constructor(bindHost: string, extra: readonly string[], interfaces: InterfaceAddresses = {}) {
    for (const entry of [...boundNames(bindHost, interfaces), ...extra]) {
      if (entry.startsWith('*.')) {
        this.suffixes.push(`.${entry.slice(2).toLowerCase()}`);
        continue;
      }
      const name = canonical(entry.includes(':') && !entry.startsWith('[') ? `[${entry}]` : entry);
      if (name) this.exact.add(name);
    }
  }

  allows(header: string | null | undefined): boolean {
    const name = hostnameOf(header);
    if (name === undefined) return false;
    return isLoopback(name) || this.exact.has(name) || this.suffixes.some((s) => name.endsWith(s));
  }
}
