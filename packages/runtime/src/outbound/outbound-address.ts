/**
 * Which addresses a process may send a request to on a tenant's behalf (a webhook endpoint, a
 * tab's MCP server), and the operator's allowlist that opens more (WEBHOOK_ALLOWED_HOSTS,
 * MCP_TAB_HOSTS). Pure: nothing here looks a name up or connects; the gateway checks a URL's
 * host with it, the worker every address a name resolves to and the one it connects to.
 */
import { BlockList, isIP } from 'node:net';

/** An operator's list of hosts and networks, parsed (`parseOutboundAllowlist`). */
export interface OutboundAllowlist {
  /** `*` is listed: any host name passes a host filter (its addresses are still checked). */
  readonly anyHost: boolean;
  /** Host names, lower case, without a trailing dot: `hooks.internal`, `*.example.com`. */
  readonly hosts: readonly string[];
  /** The networks (CIDRs, single addresses) whose addresses are allowed though not public. */
  readonly networks: BlockList;
}

/** Addresses of IPv4 that are not the public internet's (IANA's special-purpose registry). */
const specialIpv4 = subnets('ipv4', [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 itself
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255 (broadcast) included
]);

/** IPv6's global unicast space: every other IPv6 address is loopback, local, multicast or reserved. */
const globalIpv6 = subnets('ipv6', [['2000::', 3]]);

/** The special-purpose blocks inside global unicast. */
const specialIpv6 = subnets('ipv6', [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
]);

function subnets(type: 'ipv4' | 'ipv6', list: [string, number][]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix] of list) blocks.addSubnet(network, prefix, type);
  return blocks;
}

/** An address without the brackets a URL puts around IPv6. */
function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** A host as compared with an allowlist: lower case, no brackets, no trailing dot. */
export function normalizedHost(host: string): string {
  return unbracketed(host.trim().toLowerCase()).replace(/\.$/, '');
}

/** The eight 16-bit groups of an IPv6 address (`isIP(address) === 6`, no zone). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const dottedQuad = (high: number, low: number) =>
  `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for, for the forms that carry one: IPv4-mapped
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`), NAT64's well-known prefix (`64:ff9b::/96`) and 6to4
 * (`2002::/16`); null for forms never public whatever they carry (IPv4-compatible `::/96`,
 * `::` and `::1` included, and SIIT's `::ffff:0:0:0/96`); undefined for every other address.
 */
function embeddedIpv4(groups: readonly number[]): string | null | undefined {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const zeroUpTo = (end: number) => groups.slice(0, end).every((group) => group === 0);
  if (zeroUpTo(5) && g5 === 0xffff) return dottedQuad(g6, g7);
  if (zeroUpTo(6)) return null;
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return null;
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return dottedQuad(g6, g7);
  }
  if (g0 === 0x2002) return dottedQuad(g1 ?? 0, g2 ?? 0);
  return undefined;
}

/**
 * An address as it is judged: an IPv4-mapped IPv6 address becomes its IPv4 address (it reaches
 * that host); null when `address` is not an IP address, or names an interface (`fe80::1%eth0`).
 */
function canonical(address: string): { ip: string; type: 'ipv4' | 'ipv6' } | null {
  const ip = unbracketed(address.trim());
  if (ip.includes('%')) return null;
  const version = isIP(ip);
  if (version === 4) return { ip, type: 'ipv4' };
  if (version !== 6) return null;
  const groups = ipv6Groups(ip);
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  return mapped ? { ip: dottedQuad(groups[6]!, groups[7]!), type: 'ipv4' } : { ip, type: 'ipv6' };
}

/**
 * Whether an address is on the public internet: not private, loopback, link-local, carrier-grade
 * NAT, unique-local, unspecified, multicast, broadcast, documentation or otherwise reserved,
 * nor an IPv6 form of such an IPv4 address. Anything that is not an IP address is not public.
 */
export function isPublicAddress(address: string): boolean {
  const judged = canonical(address);
  if (judged === null) return false;
  if (judged.type === 'ipv4') return !specialIpv4.check(judged.ip, 'ipv4');
  const embedded = embeddedIpv4(ipv6Groups(judged.ip));
  if (embedded !== undefined) return embedded !== null && !specialIpv4.check(embedded, 'ipv4');
  return globalIpv6.check(judged.ip, 'ipv6') && !specialIpv6.check(judged.ip, 'ipv6');
}

/** Whether a request may go to `address`: a public one, or one of the allowlist's networks. */
export function isAddressAllowed(address: string, allowlist: OutboundAllowlist): boolean {
  const judged = canonical(address);
  if (judged === null) return false;
  return isPublicAddress(judged.ip) || allowlist.networks.check(judged.ip, judged.type);
}

/**
 * Whether the allowlist names `host` itself (a URL's host name or address): a host name listed
 * exactly or under a listed `*.domain`, or an address inside a listed network. `*` names no host.
 * A named host name is trusted whatever it resolves to: the operator chose it.
 */
export function namesHost(allowlist: OutboundAllowlist, host: string): boolean {
  const name = normalizedHost(host);
  const judged = canonical(name);
  if (judged !== null) return allowlist.networks.check(judged.ip, judged.type);
  return allowlist.hosts.some((pattern) =>
    pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern,
  );
}

/**
 * Whether a URL's host is refused before any lookup: an IP address the allowlist does not allow
 * (WHATWG URL parsing has already turned `0x7f.1`, `2130706433` and the like into dotted quads),
 * or `localhost` and names under it, which resolve to loopback (RFC 6761), unless listed. Other
 * names are judged by the addresses they resolve to, when the request is made.
 */
export function isRefusedHost(host: string, allowlist: OutboundAllowlist): boolean {
  const name = normalizedHost(host);
  if (namesHost(allowlist, name)) return false;
  if (canonical(name) !== null || isIP(name) !== 0) return !isAddressAllowed(name, allowlist);
  return name === 'localhost' || name.endsWith('.localhost');
}

const hostPattern = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/;

/** A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address, as a network; null if neither. */
function parseNetwork(
  entry: string,
): { address: string; prefix: number; type: 'ipv4' | 'ipv6' } | null {
  const [rawAddress = '', prefixText, ...rest] = entry.split('/');
  const address = unbracketed(rawAddress);
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return null;
  const bits = version === 4 ? 32 : 128;
  if (prefixText === undefined)
    return { address, prefix: bits, type: version === 4 ? 'ipv4' : 'ipv6' };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return null;
  return { address, prefix: Number(prefixText), type: version === 4 ? 'ipv4' : 'ipv6' };
}

/** What is wrong with one allowlist entry, or null: `*`, a host name, `*.domain`, an address or a CIDR. */
export function allowlistEntryProblem(entry: string): string | null {
  const value = entry.trim().toLowerCase();
  if (value === '*' || parseNetwork(value) !== null) return null;
  if (value.includes('/') || isIP(unbracketed(value)) !== 0) {
    return `"${entry}" is not a network like 10.0.0.0/8 or fd00::/8`;
  }
  if (hostPattern.test(value)) return null;
  return `"${entry}" is not a host name, *.domain, address or network (CIDR)`;
}

/** Parses allowlist entries (blank ones skipped); throws naming the first bad one. */
export function parseOutboundAllowlist(entries: readonly string[]): OutboundAllowlist {
  const networks = new BlockList();
  const hosts: string[] = [];
  let anyHost = false;
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const problem = allowlistEntryProblem(entry);
    if (problem !== null) throw new Error(problem);
    const network = parseNetwork(entry);
    if (entry === '*') anyHost = true;
    else if (network) networks.addSubnet(network.address, network.prefix, network.type);
    else hosts.push(entry.replace(/\.$/, ''));
  }
  return { anyHost, hosts, networks };
}

/** A comma-separated list as entries: `a.example.com, 10.0.0.0/8` → two. */
export function splitAllowlist(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}
