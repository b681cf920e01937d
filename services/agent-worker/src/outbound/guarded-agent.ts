import { lookup as systemLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import {
  isAddressAllowed,
  namesHost,
  type OutboundAllowlist,
} from '@chunklog/runtime/outbound-address';
import type { Agent } from 'undici';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a host name to its addresses. The default is the system's resolver (what a plain
 * connection would use); tests make a name resolve where they please.
 */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const resolveWithSystem: ResolveHost = (hostname) => systemLookup(hostname, { all: true });

export interface GuardOptions {
  allowlist: OutboundAllowlist;
  resolve?: ResolveHost;
  /** Told of each refused connection, with the host and the address (for the operator's log). */
  onRefused?: (refused: AddressNotAllowedError) => void;
}

/**
 * A connection the guard refused: the host's address is not public and the allowlist does not
 * open it. The message says no more than that, for it reaches tenants; `host` and `address` are
 * for the operator's log.
 */
export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super('the address is not allowed: not a public address');
    this.name = 'AddressNotAllowedError';
  }
}

/** undici, loaded on first use: a worker that never sends a request through it never pays for it. */
let loadingUndici: Promise<typeof import('undici')> | undefined;

/**
 * An undici dispatcher whose connections go only to allowed addresses: a host the allowlist
 * names goes anywhere; any other is resolved once per connection, refused when any of its
 * addresses is neither public nor in the allowlist's networks, and connected to those very
 * addresses (no second lookup a rebinding DNS server could answer differently). The address the
 * socket reached is checked again once connected. Pass it to fetch as `dispatcher`.
 */
export async function createGuardedAgent(options: GuardOptions): Promise<Agent> {
  loadingUndici ??= import('undici');
  const { Agent, buildConnector } = await loadingUndici;
  const { allowlist } = options;
  const resolve = options.resolve ?? resolveWithSystem;
  const allowed = (host: string, address: string) =>
    namesHost(allowlist, host) || isAddressAllowed(address, allowlist);
  const refusal = (host: string, address: string) => {
    const error = new AddressNotAllowedError(host, address);
    options.onRefused?.(error);
    return error;
  };

  /** The addresses to connect to, all of them allowed; throws when any is not. */
  async function allowedAddresses(hostname: string, family: number): Promise<ResolvedAddress[]> {
    const found = await resolve(hostname);
    const addresses = found.filter((entry) => family === 0 || entry.family === family);
    const refused = addresses.find((entry) => !allowed(hostname, entry.address));
    if (refused) throw refusal(hostname, refused.address);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    return addresses;
  }
  // What the socket connects to: the addresses checked, never a second lookup's.
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    const { family } = lookupOptions;
    allowedAddresses(hostname, family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : (family ?? 0)).then(
      (addresses) => {
        const [first] = addresses as [ResolvedAddress];
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
  const connect = buildConnector({ lookup });
  return new Agent({
    connect(connectOptions, callback) {
      const host = connectOptions.hostname;
      // An address in the URL is connected to without a lookup: it is judged here.
      if (isIP(host) !== 0 && !allowed(host, host)) {
        callback(refusal(host, host), null);
        return;
      }
      connect(connectOptions, (...result) => {
        const [error, socket] = result;
        if (error !== null) return callback(error, null);
        const reached = socket.remoteAddress;
        if (reached === undefined || allowed(host, reached)) return callback(null, socket);
        socket.destroy();
        callback(refusal(host, reached), null);
      });
    },
  });
}

/** A guarded agent made on first use, and closed with what uses it. */
export interface GuardedDispatcher {
  /** The agent (undici loaded, the agent made, on the first call). */
  agent(): Promise<Agent>;
  /** Closes the agent if one was made; a later use makes another. */
  close(): Promise<void>;
}

export function guardedDispatcher(options: GuardOptions): GuardedDispatcher {
  let made: Promise<Agent> | undefined;
  return {
    agent: () => (made ??= createGuardedAgent(options)),
    async close() {
      const current = made;
      made = undefined;
      if (current) await (await current).close();
    },
  };
}
