import { afterAll, describe, expect, it } from 'bun:test'
import { lookup } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { deliverDue } from '../src/webhooks/delivery'
import { refusedKind } from '../src/webhooks/ssrf'
import { startApp } from './helpers'
import { startReceiver } from './receiver'

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
    expect(await deliverDue(app.deps)).toBe(urls.length)

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
