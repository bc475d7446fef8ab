import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Which receiver URLs a webhook may point at. A webhook makes this server send requests to a
 * URL a user chose, so without these rules any key could probe the operator's own network
 * (cloud metadata at 169.254.169.254, databases on 10/8, the server itself on loopback).
 * The host is resolved and every address it resolves to must be public; the delivery then
 * connects to the address that was checked, so a DNS answer that changes between the check
 * and the connection (rebinding) cannot slip through.
 *
 * Parsing and range matching are ipaddr.js's (maintained, used by Express's proxy-addr, and it
 * reads every IPv4 form the WHATWG URL parser reads: 127.1, 0x7f000001, 0177.0.0.1, zone ids).
 * The tables below stay ours: they are the policy, and they name each range for the message.
 */

export const MUST_USE_HTTPS = 'url must use https'
export const MUST_BE_PUBLIC = 'url must be publicly routable'

/** A refused URL: `message` is the docs/reference/events.md message, `detail` says why in this case. */
export class RefusedUrl extends Error {
  constructor(
    message: typeof MUST_USE_HTTPS | typeof MUST_BE_PUBLIC,
    readonly detail: string,
  ) {
    super(message)
  }
}

export interface Target {
  url: URL
  /** the checked address to connect to; absent when insecure targets are allowed */
  address?: string
}

/** kind → CIDRs, in the order ipaddr.subnetMatch tries them (the first match names the address). */
function table<T extends ipaddr.IPv4 | ipaddr.IPv6>(entries: [kind: string, cidrs: string[]][]) {
  return Object.fromEntries(entries.map(([kind, cidrs]) => [kind, cidrs.map((c) => ipaddr.parseCIDR(c) as [T, number])]))
}

const V4_REFUSED = table<ipaddr.IPv4>([
  ['unspecified', ['0.0.0.0/8']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['CGNAT shared', ['100.64.0.0/10']],
  ['loopback', ['127.0.0.0/8']],
  ['link-local', ['169.254.0.0/16']],
  ['IETF protocol assignment', ['192.0.0.0/24']],
  ['documentation', ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24']],
  ['6to4 relay', ['192.88.99.0/24']],
  ['benchmarking', ['198.18.0.0/15']],
  ['multicast', ['224.0.0.0/4']],
  ['broadcast', ['255.255.255.255/32']],
  ['reserved', ['240.0.0.0/4']],
])

// Outside 2000::/3 nothing is global unicast; these name the common cases for the message.
const V6_NAMED = table<ipaddr.IPv6>([
  ['unspecified', ['::/128']],
  ['loopback', ['::1/128']],
  ['IPv4-mapped IPv6', ['::ffff:0:0/96']],
  ['IPv4-compatible IPv6', ['::/96']],
  ['unique-local', ['fc00::/7']],
  ['link-local', ['fe80::/10']],
  ['site-local', ['fec0::/10']],
  ['multicast', ['ff00::/8']],
])
const V6_GLOBAL = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]
const V6_REFUSED_GLOBAL = table<ipaddr.IPv6>([
  ['Teredo tunnel', ['2001::/32']],
  ['benchmarking', ['2001:2::/48']],
  ['ORCHID', ['2001:10::/28']],
  ['ORCHIDv2', ['2001:20::/28']],
  ['documentation', ['2001:db8::/32']],
])
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number]
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16') as [ipaddr.IPv6, number]

const NONE = ''
const v4Kind = (ip: ipaddr.IPv4) => ipaddr.subnetMatch(ip, V4_REFUSED, NONE) || null
/** The IPv4 address in two 16-bit groups of an IPv6 address. */
const v4In = (ip: ipaddr.IPv6, at: number) =>
  new ipaddr.IPv4([ip.parts[at]! >> 8, ip.parts[at]! & 255, ip.parts[at + 1]! >> 8, ip.parts[at + 1]! & 255])

/**
 * Why an address may not receive webhooks (`'loopback'`, `'private'`…), or null when it is public.
 * Any IPv4 form is judged by the address it names (127.1 is loopback), as the URL parser reads it.
 */
export function refusedKind(text: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6
  try {
    ip = ipaddr.parse(text) // a zone id (fe80::1%eth0) is kept apart and says nothing about the range
  } catch {
    return 'unparsable'
  }
  if (ip.kind() === 'ipv4') return v4Kind(ip as ipaddr.IPv4)
  const v6 = ip as ipaddr.IPv6
  // NAT64 and 6to4 carry an IPv4 address inside: judge that one
  if (v6.match(NAT64)) return v4Kind(v4In(v6, 6))
  if (v6.match(SIX_TO_FOUR)) return v4Kind(v4In(v6, 1))
  if (!v6.match(V6_GLOBAL)) return ipaddr.subnetMatch(v6, V6_NAMED, 'reserved IPv6')
  return ipaddr.subnetMatch(v6, V6_REFUSED_GLOBAL, NONE) || null
}

/** How long a lookup may take; a resolver that hangs must not hold an attempt past its own 5 s. */
const LOOKUP_TIMEOUT_MS = 5_000

/** All addresses of a host name, as the operating system resolves them (hosts file included); [] if none in time. */
async function resolveAll(host: string): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<[]>((resolve) => (timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS)))
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout])
    return found.map((a) => a.address)
  } catch {
    return []
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Check a receiver URL: https, and a host whose every address is public. Throws RefusedUrl.
 * `allowInsecure` (WEBHOOK_ALLOW_INSECURE, development and tests only) also accepts http and
 * loopback or private hosts.
 */
export async function checkUrl(raw: string, allowInsecure: boolean): Promise<Target> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new RefusedUrl(MUST_USE_HTTPS, `${JSON.stringify(raw)} is not an absolute URL`)
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) throw new RefusedUrl(MUST_USE_HTTPS, `the scheme is ${url.protocol.slice(0, -1)}`)
  // port 0 routes nowhere (a connect to it fails, or lands where the platform decides): refused in every mode
  if (url.port === '0') throw new RefusedUrl(MUST_BE_PUBLIC, 'port 0 is not a port a receiver can listen on')
  if (allowInsecure) return { url }

  // The URL parser already turned 0x7f000001, 2130706433 and 0177.0.0.1 into dotted form.
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase()
  if (host === '' || host === 'localhost' || host.endsWith('.localhost'))
    throw new RefusedUrl(MUST_BE_PUBLIC, `${url.hostname} is a loopback name`)
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    addresses = await resolveAll(host)
    if (addresses.length === 0) throw new RefusedUrl(MUST_BE_PUBLIC, `${host} does not resolve`)
  }
  for (const address of addresses) {
    const kind = refusedKind(address)
    if (!kind) continue
    const what = `${/^([aeio]|un)/i.test(kind) ? 'an' : 'a'} ${kind} address`
    throw new RefusedUrl(MUST_BE_PUBLIC, host === address ? `${address} is ${what}` : `${host} resolves to ${address}, ${what}`)
  }
  return { url, address: addresses[0] }
}
