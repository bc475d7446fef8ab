import { afterAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from './process'

// Issue 46, item 8, through the real `arbor import` and server (PGlite, or PostgreSQL with
// TEST_DATABASE_URL): an export re-imports to the same tree, kinds kept; a refused import leaves
// nothing, not even its project; broken YAML and links out of the bundle are refused in one line.
const ROOT = join(import.meta.dir, '..')
const work = mkdtempSync(join(tmpdir(), 'arbor-import-'))
const server = await startServer()
afterAll(async () => {
  await server.close()
  rmSync(work, { recursive: true, force: true })
})

async function arbor(args: string[]) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), ...args, '--key', server.ownerKey, '--url', server.url], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stdout, stderr, code }
}

const mutate = async (body: unknown) => {
  const res = await server.call('POST', '/api/v1/mutate', { body })
  expect([res.status, res.body.errors]).toEqual([200, undefined])
  return res.body
}
const exportOf = async (projectId: string) => {
  const res = await server.call('GET', `/api/v1/export-okf?projectId=${projectId}`)
  expect(res.status).toBe(200)
  return res.body as { files: Record<string, string>; file_count: number }
}
/** the bundle but for what an import changes: the project's id and the times */
const normal = (bundle: { files: Record<string, string> }, id: string) =>
  Object.fromEntries(
    Object.entries(bundle.files).map(([path, text]) => [
      path,
      text
        .replace(/^timestamp: .*$/m, 'timestamp: T')
        .replace(/^completedAt: .*$/m, 'completedAt: T')
        .replace(`project: ${id}`, 'project: P'),
    ]),
  )
const projectIds = async () => ((await server.call('GET', '/api/v1/projects')).body.projects as { id: string }[]).map((p) => p.id).sort()
const bundleFile = (files: Record<string, string>) => {
  const file = join(work, `bundle-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, JSON.stringify({ files }))
  return file
}
const node = (meta: string, body = '# x\n') => `---\n${meta}\n---\n\n${body}`
const INDEX = node('okf_version: 0.1\ntype: Index\ntitle: Small')

describe('arbor import of a project’s own export', () => {
  it('gives the same tree, the kind of every task (an urgent one too) kept', async () => {
    const p = 'okf-kinds'
    await mutate({ action: 'addProject', project: { name: 'Kinds', id: p } })
    await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Bet' } } },
        { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Job', iteration: 'S1' } } },
        { action: 'add', node: { id: 'draft-t1', type: 'task', data: { label: 'Fix the login now' } } },
        { action: 'add', node: { id: 'draft-t2', type: 'task', data: { label: 'Think about pricing', status: 'done' } } },
      ],
    })
    const tasks = (await server.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes.filter((n: { type: string }) => n.type === 'task')
    await mutate({ action: 'update', projectId: p, nodeId: tasks[0].id, data: { kind: 'do-it', urgent: true } })
    await mutate({ action: 'update', projectId: p, nodeId: tasks[1].id, data: { kind: 'memo' } })
    const first = await exportOf(p)
    expect(Object.values(first.files).filter((f) => /^urgent: true$/m.test(f))).toHaveLength(1)

    const imported = await arbor(['import', bundleFile(first.files)])
    expect([imported.code, imported.stderr]).toEqual([0, ''])
    const target = /^imported 6 nodes into project (\S+) \(Kinds\)\n$/.exec(imported.stdout)?.[1]
    expect(target).toBeString()
    const second = await exportOf(target!)
    expect(normal(second, target!)).toEqual(normal(first, p))
    // history.md, 2: the import's adds are changes of one request, made by the owner via the CLI
    const history = await server.call('GET', `/api/v1/history?projectId=${target}&limit=200`)
    const changes = history.body.changes as { action: string; requestId: string; actor: { userName: string; via: string } }[]
    expect(changes.filter((c) => c.action === 'add')).toHaveLength(6)
    expect(new Set(changes.map((c) => `${c.actor.via} ${c.actor.userName} ${c.requestId}`)).size).toBe(1)
    expect(changes[0]!.actor.via).toBe('cli')
  })
})

describe('a refused import', () => {
  it('leaves nothing behind: no new project, no node (one transaction)', async () => {
    const before = await projectIds()
    const files = {
      'index.md': INDEX,
      'goals/goal-1.md': node('type: Goal\ntitle: Fine\nid: goal-1'),
      'tasks/task-1.md': node('type: Task\ntitle: Urgent but not do-it\nkind: memo\nurgent: true\nid: task-1'),
    }
    const res = await arbor(['import', bundleFile(files)])
    expect([res.code, res.stdout]).toEqual([1, ''])
    expect(res.stderr).toMatch(/^arbor import: 400: mutations\[\d+\]: urgent is only valid on a do-it task.*\n$/)
    expect(await projectIds()).toEqual(before)
    // and the same through the API itself
    const api = await server.call('POST', '/api/v1/import-okf', { body: { files } })
    expect(api.status).toBe(400)
    expect(await projectIds()).toEqual(before)
  })

  it('refuses a field on the wrong type with the message of POST /mutate: a chunk is checked as a batch body is', async () => {
    const before = await projectIds()
    const files = {
      'index.md': INDEX,
      'goals/goal-1.md': node('type: Goal\ntitle: Sized\nsize: car\nid: goal-1'),
    }
    const api = await server.call('POST', '/api/v1/import-okf', { body: { files } })
    expect([api.status, api.body.errors]).toEqual([400, ['mutations[0]: size is not valid on a goal; it is valid on: approach']])
    expect(await projectIds()).toEqual(before)
  })
})

describe('issue 50, 7', () => {
  it('refuses urgent without kind in a bundle, by the task, instead of dropping it', async () => {
    const before = await projectIds()
    const files = {
      'index.md': INDEX,
      'tasks/task-1.md': node('type: Task\ntitle: Urgent without a kind\nurgent: true\nid: task-1'),
    }
    const message = 'task-1: urgent is set without kind; urgent is only valid on a do-it task: add kind: do-it beside it, or remove urgent'
    const res = await arbor(['import', bundleFile(files)])
    expect([res.code, res.stdout, res.stderr]).toEqual([1, '', `arbor import: 400: ${message}\n`])
    const api = await server.call('POST', '/api/v1/import-okf', { body: { files } })
    expect([api.status, api.body.errors]).toEqual([400, [message]])
    expect(await projectIds()).toEqual(before)
  })

  it('refuses a FIFO (or anything but a regular file or a directory) given as the path, at once', async () => {
    const fifo = join(work, 'bundle.fifo')
    const made = Bun.spawnSync(['mkfifo', fifo])
    expect(made.exitCode).toBe(0)
    const res = await arbor(['import', fifo])
    expect([res.code, res.stdout, res.stderr]).toEqual([1, '', `arbor import: ${fifo} is not a regular file or a directory: refused\n`])
    const device = await arbor(['import', '/dev/zero'])
    expect([device.code, device.stderr]).toEqual([1, 'arbor import: /dev/zero is not a regular file or a directory: refused\n'])
  })
})

describe('a bundle the YAML reader refuses', () => {
  const bomb = [
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
    'type: Goal',
    'title: Bomb',
    'id: goal-1',
  ].join('\n')
  const cases: [string, string, RegExp][] = [
    ['invalid YAML', node('type: Goal\ntitle: [unclosed\nid: goal-1'), /^goals\/goal-1\.md: invalid YAML frontmatter: .+$/],
    ['a YAML alias bomb', node(bomb), /^goals\/goal-1\.md: invalid YAML frontmatter: .*alias.*$/i],
    ['a frontmatter that is not a mapping', node('- just\n- a list'), /^goals\/goal-1\.md: the YAML frontmatter must be a mapping/],
    [
      'a type named after a property of every object',
      node('type: constructor\ntitle: x\nid: goal-1'),
      /^goals\/goal-1\.md: frontmatter needs a type/,
    ],
  ]
  for (const [what, text, message] of cases)
    it(`gives one line for ${what}, from the command and from the API (400)`, async () => {
      const before = await projectIds()
      const files = { 'index.md': INDEX, 'goals/goal-1.md': text }
      const started = Date.now()
      const res = await arbor(['import', bundleFile(files)])
      expect([res.code, res.stdout, res.stderr.split('\n').length]).toEqual([1, '', 2])
      expect(res.stderr.replace(/^arbor import: /, '').trimEnd()).toMatch(message)
      expect(Date.now() - started).toBeLessThan(30_000)
      const api = await server.call('POST', '/api/v1/import-okf', { body: { files } })
      expect([api.status, api.body.errors?.length]).toEqual([400, 1])
      expect(api.body.errors[0]).toMatch(message)
      expect(await projectIds()).toEqual(before)
    })
})

describe('a bundle directory', () => {
  it('refuses a symbolic link that leaves the bundle, and follows one that stays inside', async () => {
    const outside = join(work, 'secret.md')
    writeFileSync(outside, node('type: Goal\ntitle: Read from outside\nid: goal-9'))
    const dir = join(work, 'bundle-dir')
    mkdirSync(join(dir, 'goals'), { recursive: true })
    mkdirSync(join(dir, 'meta'))
    writeFileSync(join(dir, 'meta', 'index.txt'), INDEX)
    symlinkSync(join(dir, 'meta', 'index.txt'), join(dir, 'index.md')) // inside: followed
    writeFileSync(join(dir, 'goals', 'goal-1.md'), node('type: Goal\ntitle: Inside\nid: goal-1'))
    const before = await projectIds()
    symlinkSync(outside, join(dir, 'goals', 'goal-9.md'))
    const refused = await arbor(['import', dir])
    expect([refused.code, refused.stdout, refused.stderr]).toEqual([
      1,
      '',
      `arbor import: goals/goal-9.md: a symbolic link to ${outside}, outside the bundle: refused\n`,
    ])
    symlinkSync(work, join(dir, 'up')) // a folder link out of the bundle is refused the same way
    rmSync(join(dir, 'goals', 'goal-9.md'))
    const folder = await arbor(['import', dir])
    expect([folder.code, folder.stderr]).toEqual([1, `arbor import: up: a symbolic link to ${work}, outside the bundle: refused\n`])
    expect(await projectIds()).toEqual(before)
    rmSync(join(dir, 'up'))
    const ok = await arbor(['import', dir])
    expect([ok.code, ok.stderr]).toEqual([0, ''])
    expect(ok.stdout).toMatch(/^imported 1 nodes into project small-\S+ \(Small\)\n$/)
  })
})

describe('the import’s project', () => {
  // the project an import creates is refused as POST /mutate's addProject refuses it: a blank name
  // (the body's or the bundle's title) by the body's schema, one over 100 characters after trimming
  // by addProject itself; nothing of the import is kept
  const long = 'x'.repeat(101)
  const cases: [string, { name?: string; title: string }][] = [
    ['a blank name sent', { name: '   ', title: 'Small' }],
    ['a blank title in the bundle', { title: "'   '" }],
    ['a name sent over 100 characters', { name: ` ${long} `, title: 'Small' }],
    ['a title over 100 characters in the bundle', { title: long }],
  ]
  for (const [what, { name, title }] of cases) {
    it(`refuses ${what} with addProject's message (400)`, async () => {
      const before = await projectIds()
      const files = {
        'index.md': node(`okf_version: 0.1\ntype: Index\ntitle: ${title}`),
        'goals/goal-1.md': node('type: Goal\ntitle: Fine\nid: goal-1'),
      }
      const asked = name ?? (title.startsWith("'") ? title.slice(1, -1) : title)
      const direct = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: asked } } })
      expect(direct.status).toBe(400)
      const api = await server.call('POST', '/api/v1/import-okf', { body: { files, ...(name === undefined ? {} : { name }) } })
      expect([api.status, api.body.errors]).toEqual([400, direct.body.errors])
      expect(await projectIds()).toEqual(before)
    })
  }
})
