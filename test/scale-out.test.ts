import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * examples/scale-out as files (docs/scaling-out.md): the compose file has the topology of
 * stack.ts (no Docker engine here, so its structure is checked, not run), and haproxy.cfg is one
 * HAProxy accepts, balancing three replicas checked on /healthz. stack.ts itself runs in .ci/run
 * (the swarm with faults) and in `npm run bench:swarm`.
 */
const DIR = join(import.meta.dir, '..', 'examples', 'scale-out')
const compose = Bun.YAML.parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8')) as {
  services: Record<string, { image?: string; build?: unknown; environment?: Record<string, string>; volumes?: string[]; ports?: string[] }>
}
const cfg = readFileSync(join(DIR, 'haproxy.cfg'), 'utf8')
const haproxy = Bun.which('haproxy') ?? (Bun.file('/usr/sbin/haproxy').size ? '/usr/sbin/haproxy' : null)

describe('examples/scale-out', () => {
  it('composes one PostgreSQL, one Meilisearch, three replicas of the image on them, and HAProxy before the replicas', () => {
    const s = compose.services
    expect(Object.keys(s).sort()).toEqual(['arbor-1', 'arbor-2', 'arbor-3', 'haproxy', 'meilisearch', 'postgres'])
    const pg = s.postgres!.environment!
    for (const name of ['arbor-1', 'arbor-2', 'arbor-3']) {
      const r = s[name]!
      expect(r.build).toBeDefined()
      expect(r.environment).toMatchObject({
        DATABASE_URL: `postgres://${pg.POSTGRES_USER}:${pg.POSTGRES_PASSWORD}@postgres:5432/${pg.POSTGRES_DB}`,
        MEILI_URL: 'http://meilisearch:7700',
        MEILI_API_KEY: s.meilisearch!.environment!.MEILI_MASTER_KEY,
        TRUST_PROXY: 'true',
        PORT: '3000',
      })
      expect(r.volumes).toEqual([`${name}-data:/data`]) // each replica its own DATA_DIR
    }
    expect(s.haproxy!.environment).toEqual({
      ARBOR_LB_PORT: '8080',
      ARBOR_REPLICA_1: 'arbor-1:3000',
      ARBOR_REPLICA_2: 'arbor-2:3000',
      ARBOR_REPLICA_3: 'arbor-3:3000',
    })
    expect(s.haproxy!.volumes).toEqual(['./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'])
    expect(s.haproxy!.ports).toEqual([`\${ARBOR_HTTP_PORT:-8080}:8080`]) // Compose's own ${…}, not ours
  })

  it('balances three replicas in haproxy.cfg, each checked with GET /healthz, a refused connection sent to another', () => {
    expect(cfg.match(/^\s+server r\d "\$\{ARBOR_REPLICA_\d\}" check$/gm)).toHaveLength(3)
    expect(cfg).toContain('http-check send meth GET uri /healthz ver HTTP/1.1')
    expect(cfg).toContain('http-check expect status 200')
    expect(cfg).toContain('retry-on conn-failure')
    expect(cfg).toContain('option redispatch')
  })

  it.skipIf(!haproxy)('is a configuration HAProxy accepts (haproxy -c)', () => {
    const check = Bun.spawnSync([haproxy!, '-c', '-f', join(DIR, 'haproxy.cfg')], {
      env: {
        ...process.env,
        ARBOR_LB_PORT: '18080',
        ARBOR_REPLICA_1: '127.0.0.1:1',
        ARBOR_REPLICA_2: '127.0.0.1:2',
        ARBOR_REPLICA_3: '127.0.0.1:3',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect({ code: check.exitCode, out: check.stdout.toString() }).toEqual({ code: 0, out: expect.stringContaining('valid') })
  })
})
