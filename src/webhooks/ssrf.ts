import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/**
 * Which receiver URLs a webhook may point at. A webhook makes this server send requests to a
 * URL a user chose, so without these rules any key could probe the operator's own network
 * (cloud metadata at 169.254.169.254, databases on 10/8, the server itself on loopback).
 * The host is resolved and every address it resolves to must be public; the delivery then
 * connects to the address that was checked, so a DNS answer that changes between the check
 * and the connection (rebinding) cannot slip through.
 */

export const MUST_USE_HTTPS = 'url must use https'
export const MUST_BE_PUBLIC = 'url must be publicly routable'

/** A refused URL: `message` is the api.md message, `detail` says why in this case. */
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

type Range = [base: bigint, bits: number, kind: string]

function v4ToInt(ip: string): bigint {
  return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n)
}

function v6ToInt(ip: string): bigint {
  let text = ip.replace(/%.*$/, '') // a zone id (fe80::1%eth0) says nothing about the range
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const v4 = Number(v4ToInt(dotted[1]!))
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n)
}

const v4 = (cidr: string, kind: string): Range => {
  const [base, bits] = cidr.split('/')
  return [v4ToInt(base!), Number(bits), kind]
}
const v6 = (cidr: string, kind: string): Range => {
  const [base, bits] = cidr.split('/')
  return [v6ToInt(base!), Number(bits), kind]
}

const V4_REFUSED: Range[] = [
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'CGNAT shared'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignment'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', '6to4 relay'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
]

// Outside 2000::/3 nothing is global unicast; these name the common cases for the message.
const V6_NAMED: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::ffff:0:0/96', 'IPv4-mapped IPv6'),
  v6('::/96', 'IPv4-compatible IPv6'),
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local'),
  v6('ff00::/8', 'multicast'),
]
const V6_GLOBAL = v6('2000::/3', '')
const V6_REFUSED_GLOBAL: Range[] = [
  v6('2001::/32', 'Teredo tunnel'),
  v6('2001:2::/48', 'benchmarking'),
  v6('2001:10::/28', 'ORCHID'),
  v6('2001:20::/28', 'ORCHIDv2'),
  v6('2001:db8::/32', 'documentation'),
]
const NAT64 = v6('64:ff9b::/96', '')
const SIX_TO_FOUR = v6('2002::/16', '')

const within = (n: bigint, width: number, [base, bits]: Range) => n >> BigInt(width - bits) === base >> BigInt(width - bits)

function v4Kind(ip: string): string | null {
  const n = v4ToInt(ip)
  return V4_REFUSED.find((r) => within(n, 32, r))?.[2] ?? null
}

const intToV4 = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => Number((n >> s) & 255n)).join('.')

/** Why an address may not receive webhooks (`'loopback'`, `'private'`…), or null when it is public. */
export function refusedKind(ip: string): string | null {
  const family = isIP(ip.replace(/%.*$/, ''))
  if (family === 4) return v4Kind(ip)
  if (family !== 6) return 'unparsable'
  const n = v6ToInt(ip)
  // NAT64 and 6to4 carry an IPv4 address inside: judge that one
  if (within(n, 128, NAT64)) return v4Kind(intToV4(n & 0xffffffffn))
  if (within(n, 128, SIX_TO_FOUR)) return v4Kind(intToV4((n >> 80n) & 0xffffffffn))
  if (!within(n, 128, V6_GLOBAL)) return V6_NAMED.find((r) => within(n, 128, r))?.[2] ?? 'reserved IPv6'
  return V6_REFUSED_GLOBAL.find((r) => within(n, 128, r))?.[2] ?? null
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
