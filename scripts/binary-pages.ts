import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from 'node:fs';

/*
 * Which pages of its own executable a process holds resident, summed by what
 * they hold: ICU's data and code, V8's compilers and builtins, OpenSSL, node's
 * own code, and sections without a symbol (node's built-in modules' sources
 * and code cache sit in .rodata). That is most of the `RssFile` of a Node
 * process (docs/library.md, Footprint).
 *
 *   node --import tsx scripts/binary-pages.ts PID
 *
 * Reads /proc/PID/pagemap (only the present bit, which needs no privilege for
 * one's own processes) and the executable's symbol table (`nm`, `readelf`
 * from binutils; Debian's node keeps its symbols).
 */

const PAGE = 4096;

interface Symbol {
  start: number;
  end: number;
  name: string;
}

interface Section {
  name: string;
  addr: number;
  offset: number;
  size: number;
}

/** GROUPS names a symbol's part of the binary; the first match wins. */
const GROUPS: [string, RegExp][] = [
  ['ICU data', /^icudt\d+_dat$/],
  ['ICU code', /icu_\d+::|^(u_|ucol_|ubrk_|udat|unum|ures_|uprv_|ucnv|utrans|uloc|ustr|utf8_|ucase|uhash|umtx|ucal)/],
  ['V8 builtins', /^Builtins_/],
  ['V8 compilers', /^v8::internal::(compiler|maglev|turboshaft|baseline)::/],
  ['V8 parser and interpreter', /^v8::internal::(interpreter::|Parser|PreParser|Scanner)/],
  ['V8 wasm', /^v8::internal::wasm::/],
  ['V8 other', /^(v8::|v8_inspector::|cppgc::)/],
  [
    'OpenSSL',
    /^(EVP_|SSL_|ssl|tls|X509|x509|BN_|bn_|EC_|ec_|RSA_|rsa|ossl|OSSL|OPENSSL|CRYPTO|ASN1|asn1|PEM|BIO|ERR_)/,
  ],
  ['libuv', /^uv_{1,2}/],
  ['llhttp', /^llhttp/],
  ['node', /^(node::|napi_)/],
];

function groupOf(name: string): string {
  return GROUPS.find(([, re]) => re.test(name))?.[0] ?? 'other symbols';
}

function symbolsOf(exe: string): Symbol[] {
  const out: Symbol[] = [];
  const text = execFileSync('nm', ['-C', '-S', '-n', '--defined-only', exe], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) \w (.*)$/.exec(line);
    if (m) out.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! });
  }
  if (out.length === 0) throw new Error(`${exe} has no symbol table: its pages can be counted, not attributed`);
  return out.sort((a, b) => a.start - b.start);
}

function sectionsOf(exe: string): Section[] {
  const text = execFileSync('readelf', ['-SW', exe], { encoding: 'utf8' });
  const out: Section[] = [];
  for (const line of text.split('\n')) {
    const m = /\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)/.exec(line);
    if (m && parseInt(m[2]!, 16) > 0)
      out.push({ name: m[1]!, addr: parseInt(m[2]!, 16), offset: parseInt(m[3]!, 16), size: parseInt(m[4]!, 16) });
  }
  return out;
}

/** symbolAt finds the symbol that covers address a, by binary search over symbols sorted by start. */
function symbolAt(symbols: Symbol[], a: number): Symbol | undefined {
  let lo = 0;
  let hi = symbols.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (symbols[mid]!.start <= a) lo = mid;
    else hi = mid - 1;
  }
  const s = symbols[lo];
  return s && s.start <= a && a < Math.max(s.end, s.start + 1) ? s : undefined;
}

function main(): void {
  const pid = process.argv[2];
  if (!pid || !/^\d+$/.test(pid)) throw new Error('usage: node --import tsx scripts/binary-pages.ts PID');
  const exe = readlinkSync(`/proc/${pid}/exe`);
  const symbols = symbolsOf(exe);
  const sections = sectionsOf(exe);
  const bytes = new Map<string, number>();
  const pagemap = openSync(`/proc/${pid}/pagemap`, 'r');
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f[5] !== exe) continue;
      const [start, end] = f[0]!.split('-').map((x) => parseInt(x, 16)) as [number, number];
      const offset = parseInt(f[2]!, 16);
      const pages = (end - start) / PAGE;
      const entries = Buffer.alloc(pages * 8);
      readSync(pagemap, entries, 0, entries.length, (start / PAGE) * 8);
      for (let i = 0; i < pages; i++) {
        if (!(entries.readUInt32LE(i * 8 + 4) >>> 31)) continue;
        const fileOffset = offset + i * PAGE;
        const section = sections.find((s) => fileOffset >= s.offset && fileOffset < s.offset + s.size);
        // A page may hold the ends of several symbols: share it out in 64-byte steps.
        for (let o = 0; o < PAGE; o += 64) {
          const addr = section ? section.addr + (fileOffset + o - section.offset) : -1;
          const sym = section ? symbolAt(symbols, addr) : undefined;
          const group = sym ? groupOf(sym.name) : `no symbol: ${section?.name ?? 'headers'}`;
          bytes.set(group, (bytes.get(group) ?? 0) + 64);
        }
      }
    }
  } finally {
    closeSync(pagemap);
  }
  const mb = (n: number) => (n / 2 ** 20).toFixed(2).padStart(7);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  console.log(`${mb(total)} MB of ${exe} resident in process ${pid}`);
  for (const [group, n] of [...bytes].sort((a, b) => b[1] - a[1]))
    if (n >= 2 ** 16) console.log(`${mb(n)} MB  ${group}`);
}

main();
