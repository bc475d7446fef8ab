import { afterAll, describe, expect, it } from 'bun:test'
import { lookup } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { deliverDue } from '../src/webhooks/delivery'
import { refusedKind } from '../src/webhooks/ssrf'
import { startApp } from './helpers'
import { startReceiver, until } from './receiver'

// api.md Webhooks rule 1 and the issue: https and publicly routable only, checked at registration
// and again at every delivery attempt (the DNS answer may change after registration).
const HTTPS = 'url must use https'
const PUBLIC = 'url must be publicly routable'

/** A name from the hosts file that resolves to a non-public address and is not a *localhost name. */
async function privateName(): Promise<string> {
  const names = readFileSync('/etc/hosts', 'utf8')
    .split('\n')
    .flatMap((line) => line.replace(/#.*/, '').trim().split(/\s+/).slice(1))
    .filter((n) => n && !/(^|\.)localhost\.?$/i.test(n))
  for (const name of names) {
    const found = await lookup(name, { all: true }).catch(() => [])
    if (found.length && found.some((a) => refusedKind(a.address))) return name
  }
  throw new Error('no name in /etc/hosts resolves to a private address')
}
const named = await privateName()

// [url, the api.md message]
const REFUSED: [string, string][] = [
  ['http://93.184.216.34/hook', HTTPS],
  ['ftp://93.184.216.34/hook', HTTPS],
  ['https://localhost/hook', PUBLIC],
  ['https://localhost./hook', PUBLIC],
  ['https://LOCALHOST:8443/hook', PUBLIC],
  ['https://api.localhost/hook', PUBLIC],
  ['https://127.0.0.1/hook', PUBLIC],
  ['https://127.1/hook', PUBLIC],
  ['https://0x7f000001/hook', PUBLIC],
  ['https://2130706433/hook', PUBLIC],
  ['https://0177.0.0.1/hook', PUBLIC],
  ['https://0.0.0.0/hook', PUBLIC],
  ['https://10.0.0.1/hook', PUBLIC],
  ['https://172.16.5.4/hook', PUBLIC],
  ['https://172.31.255.255/hook', PUBLIC],
  ['https://192.168.1.1/hook', PUBLIC],
  ['https://169.254.169.254/latest/meta-data/', PUBLIC],
  ['https://100.64.0.1/hook', PUBLIC],
  ['https://100.127.255.254/hook', PUBLIC],
  ['https://198.18.0.1/hook', PUBLIC],
  ['https://224.0.0.1/hook', PUBLIC],
  ['https://239.255.255.250/hook', PUBLIC],
  ['https://255.255.255.255/hook', PUBLIC],
  ['https://[::1]/hook', PUBLIC],
  ['https://[::]/hook', PUBLIC],
  ['https://[::ffff:127.0.0.1]/hook', PUBLIC],
  ['https://[::ffff:169.254.169.254]/hook', PUBLIC],
  ['https://[::ffff:8.8.8.8]/hook', PUBLIC],
  ['https://[fe80::1]/hook', PUBLIC],
  ['https://[fc00::1]/hook', PUBLIC],
  ['https://[fd12:3456:789a::1]/hook', PUBLIC],
  ['https://[ff02::1]/hook', PUBLIC],
  ['https://[64:ff9b::a9fe:a9fe]/hook', PUBLIC],
  ['https://[2002:7f00:1::1]/hook', PUBLIC],
  ['https://[2001:db8::1]/hook', PUBLIC],
  [`https://${named}/hook`, PUBLIC],
  ['https://no-such-host.invalid/hook', PUBLIC],
  ['https://8.8.8.8:0/hook', PUBLIC],
  ['https://[2606:4700:4700::1111]:00/hook', PUBLIC],
]

const app = await startApp()
const rx = startReceiver()
afterAll(async () => {
  await app.close()
  rx.close()
})

describe('the address rules', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'CGNAT shared'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped IPv6'],
    ['fc00::1', 'unique-local'],
    ['fd00::1', 'unique-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378::1', 'Teredo tunnel'],
  ])('refuses %s as %s', (ip, kind) => {
    expect(refusedKind(ip)).toBe(kind)
  })

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '64:ff9b::808:808',
  ])('accepts the public address %s', (ip) => {
    expect(refusedKind(ip)).toBeNull()
  })
})

// The edges where a library could read an address differently from the hand-written checks it
// replaced (ipaddr.js since issue 27): each IPv4 spelling the URL parser accepts, IPv4 inside IPv6,
// and the first and last address of each refused range.
describe('the address rules at their edges', () => {
  it.each([
    ['127.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['012.1', 'private'],
    ['0xa9.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['100.64.0.0', 'CGNAT shared'],
    ['100.127.255.255', 'CGNAT shared'],
    ['172.31.255.255', 'private'],
    ['169.254.255.255', 'link-local'],
    ['239.255.255.255', 'multicast'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.254', 'documentation'],
    ['192.88.99.1', '6to4 relay'],
    ['198.19.255.255', 'benchmarking'],
    ['::ffff:7f00:1', 'IPv4-mapped IPv6'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped IPv6'],
    ['0:0:0:0:0:ffff:0808:0808', 'IPv4-mapped IPv6'],
    ['::7f00:1', 'IPv4-compatible IPv6'],
    // the one edge ipaddr.js reads its own way: the deprecated ::a.b.c.d form as ::ffff:a.b.c.d
    // (refused either way; the URL parser and the resolver hand us ::7f00:1, the line above)
    ['::127.0.0.1', 'IPv4-mapped IPv6'],
    ['::ffff:0:127.0.0.1', 'reserved IPv6'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b:1::808:808', 'reserved IPv6'],
    ['2002:a9fe:a9fe::', 'link-local'],
    ['2002:0a00:0001::1', 'private'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff0e::1', 'multicast'],
    ['0::0', 'unspecified'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['100::1', 'reserved IPv6'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['2001:db8:ffff::1', 'documentation'],
    ['not-an-address', 'unparsable'],
    ['256.0.0.1', 'unparsable'],
    ['1.2.3.4.5', 'unparsable'],
    ['', 'unparsable'],
  ])('refuses %s as %s', (ip, kind) => {
    expect(refusedKind(ip)).toBe(kind)
  })

  it.each([
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '192.0.3.1',
    '223.255.255.255',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:4860:4860::8888',
    '1.2.3',
  ])('accepts the public address %s', (ip) => {
    expect(refusedKind(ip)).toBeNull()
  })

  it('refuses each spelling at registration, with the address the URL parser read in the message', async () => {
    const p = await app.project()
    const why = async (url: string) => {
      const res = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url } })
      return [res.status, res.body.error, res.body.message]
    }
    expect(await why('https://0x7f.1/')).toEqual([400, PUBLIC, '127.0.0.1 is a loopback address'])
    expect(await why('https://012.1/')).toEqual([400, PUBLIC, '10.0.0.1 is a private address'])
    expect(await why('https://[::127.0.0.1]/')).toEqual([400, PUBLIC, '::7f00:1 is an IPv4-compatible IPv6 address'])
    expect(await why('https://[64:ff9b::169.254.169.254]/')).toEqual([400, PUBLIC, '64:ff9b::a9fe:a9fe is a link-local address'])
    expect(await why('https://[2002:a9fe:a9fe::1]/')).toEqual([400, PUBLIC, '2002:a9fe:a9fe::1 is a link-local address'])
    expect(await why('https://[fe80::1%25eth0]/')).toEqual([400, HTTPS, '"https://[fe80::1%25eth0]/" is not an absolute URL'])
    expect(await why('https://255.255.255.255/')).toEqual([400, PUBLIC, '255.255.255.255 is a broadcast address'])
    expect(await why('https://192.0.2.1/')).toEqual([400, PUBLIC, '192.0.2.1 is a documentation address'])
  })
})

describe('at registration', () => {
  it(`refuses all ${REFUSED.length} URLs of the table with the api.md message`, async () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(25)
    const p = await app.project()
    const got: [string, string][] = []
    for (const [url] of REFUSED) {
      const res = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url } })
      expect(res.status).toBe(400)
      got.push([url, res.body.error])
    }
    expect(got).toEqual(REFUSED)
    expect((await app.call('GET', `/api/v1/webhooks?projectId=${p}`)).body.webhooks).toEqual([])
  })

  it('says why in message', async () => {
    const p = await app.project()
    const why = async (url: string) => (await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url } })).body.message
    expect(await why('https://169.254.169.254/')).toBe('169.254.169.254 is a link-local address')
    expect(await why('https://0x7f000001/')).toBe('127.0.0.1 is a loopback address')
    expect(await why('https://[::ffff:127.0.0.1]/')).toBe('::ffff:7f00:1 is an IPv4-mapped IPv6 address')
    expect(await why('https://localhost./')).toBe('localhost. is a loopback name')
    expect(await why('https://8.8.8.8:0/')).toBe('port 0 is not a port a receiver can listen on')
    expect(await why(`https://${named}/`)).toMatch(new RegExp(`^${named.replace(/\./g, '\\.')} resolves to .+, an? [-\\w ]+ address$`))
  })

  it('accepts public https receivers', async () => {
    const p = await app.project()
    for (const url of [
      'https://93.184.216.34/hook',
      'https://8.8.8.8:8443/x?y=1',
      'https://[2606:4700:4700::1111]/hook',
      'https://[64:ff9b::808:808]/hook',
    ]) {
      const res = await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url } })
      expect(res.status).toBe(201)
    }
  })
})

describe('at delivery', () => {
  it('refuses every URL of the table again at the attempt, and nothing reaches a local receiver', async () => {
    // Registered while WEBHOOK_ALLOW_INSECURE was on (as if the DNS answer changed since), then
    // the server runs without it: every attempt must be refused before connecting.
    app.config.webhookAllowInsecure = true
    // no scheme but http(s) is ever accepted, and port 0 is refused in every mode
    const table = REFUSED.filter(([url]) => /^https?:/.test(url) && !/:0+\//.test(url))
    const urls = [...table.map(([url]) => url), rx.url('/ssrf'), `https://127.0.0.1:${rx.port}/ssrf`]
    const projects: string[] = []
    for (let i = 0; i < urls.length; i += 10) {
      const p = await app.project()
      projects.push(p)
      for (const url of urls.slice(i, i + 10))
        expect((await app.call('POST', '/api/v1/webhooks', { body: { projectId: p, url } })).status).toBe(201)
    }
    app.config.webhookAllowInsecure = false

    for (const p of projects)
      await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'probe' } } } })
    // on PostgreSQL the fan-out takes an event only once every older write transaction of the
    // cluster has ended (docs/scaling-out.md): a test file run beside this one may hold one open,
    // so the attempts are counted until every URL has had one (CI at c1cac75 read 0 at once)
    let attempted = 0
    await until(async () => (attempted += await deliverDue(app.deps)) >= urls.length, 'an attempt at every URL', 60_000)
    expect(attempted).toBe(urls.length)

    const hooks = (await Promise.all(projects.map((p) => app.call('GET', `/api/v1/webhooks?projectId=${p}`)))).flatMap(
      (r) => r.body.webhooks,
    )
    const outcome = hooks.map((h: any) => [h.url, h.lastStatus, h.lastError.split(':')[0]])
    const expected = [...table, [rx.url('/ssrf'), HTTPS], [`https://127.0.0.1:${rx.port}/ssrf`, PUBLIC]].map(([url, message]) => [
      new URL(url!).toString(),
      null,
      message,
    ])
    expect(outcome).toEqual(expected)
    expect(rx.requests).toHaveLength(0)
  })
})
