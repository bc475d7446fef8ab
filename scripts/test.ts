/**
 * The test runner behind `npm test` and `npm run test:all` (docs/development.md): each test file
 * in a `bun test` process of its own, TEST_WORKERS at a time (default: the CPU count, at most 4;
 * the few files of ALONE below last, one at a time), so that the console shows one line per file as it ends (`[12/85] test/http.test.ts  41 pass  3.2 s`)
 * and every failure in full, and everything a file prints (server logs, figures, `(pass)` lines)
 * goes to test-output/logs/<file>.log instead of the console.
 *
 *   npx bun scripts/test.ts            the quick set: every file but those of SLOW below
 *   npx bun scripts/test.ts --all      every file (what CI runs, on PGlite and on PostgreSQL)
 *   npx bun scripts/test.ts FILE…      those files
 *
 * The last lines are bun test's own summary (` N pass`, ` N fail`, ` N skip`) over every file,
 * which .ci/run adds up. Exit 1 when any file failed (or ended without its summary).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { basename, join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
/** emptied at each run; the screenshots the app tests leave in test-output/ stay */
const OUT = join(ROOT, 'test-output', 'logs')
const TIMEOUT_MS = '30000'

/**
 * Left to `npm run test:all`: files that start the real server process or a browser, and those
 * that time or load the machine. Each takes from 10 s to several minutes; together they are
 * most of the suite's time. Every rule they hold through a process has a test through
 * `app.handle` in the quick set; what only they prove is the wiring (loops, signals, the CLI,
 * stdio MCP, replicas, the canvas in Chromium).
 */
const SLOW: [RegExp, string][] = [
  [/^process\./, 'the real server process (test/process.ts), the CLI and stdio MCP'],
  [/^app\./, 'the app in Chromium'],
  [/^bench\./, 'a benchmark run as a test'],
]
/** a file that starts the real server process or a browser, whatever its name */
const STARTS_PROCESS = /from '\.\/(process|app\.lib)'|playwright-core/
/**
 * Files that hold a wait to a bound of two or three seconds (a command on the other replica's
 * page, an agent's write on the open page), and webhooks.delivery, whose deliveries on
 * PostgreSQL wait until every older write transaction of the cluster has ended (the fan-out's
 * xid horizon, sql/webhooks/fan-out.sql), in any database: a test file beside it that holds a
 * write open for seconds holds its deliveries back past the bounds it checks (a hanging
 * receiver's 5 s; two CI runs failed on it). With more than one worker they run last, one at a
 * time, with no other test file beside them.
 */
const ALONE = /^(process\.view|app\.journeys|webhooks\.delivery)\.test\.ts$/

const args = process.argv.slice(2)
const all = args.includes('--all')
const named = args.filter((a) => !a.startsWith('--'))
const workers = Math.max(1, Number(process.env.TEST_WORKERS) || Math.min(4, availableParallelism()))

const everyFile = readdirSync(join(ROOT, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .sort()
const isSlow = (f: string) => SLOW.some(([re]) => re.test(f)) || STARTS_PROCESS.test(readFileSync(join(ROOT, 'test', f), 'utf8'))
// with --all the slow files start first, so that the workers end together
/**
 * Files run on PGlite only: on TEST_DATABASE_URL the runner names them and leaves them out (a
 * file named on the command line still runs). Each proves the browser's side of the app (layout,
 * the keyboard, dialogs, screenshots), which is the same on either database; the server's side
 * of what they do (writes, reverts, proposals, keys) has its tests on both, in process and through
 * the real server (test/process.*). The app's files that watch the live path or a conflict
 * (app.live, app.journeys, app.revisions) run on both.
 */
const PGLITE_ONLY = /^app\.(contact|edit|first|history|keys|keys-review|layout|proposals|second|undo)\.test\.ts$/
const pgliteOnly = process.env.TEST_DATABASE_URL ? everyFile.filter((f) => PGLITE_ONLY.test(f)) : []
const files = named.length
  ? named
  : everyFile
      .filter((f) => (all || !isSlow(f)) && !pgliteOnly.includes(f))
      .sort((a, b) => Number(isSlow(b)) - Number(isSlow(a)))
      .map((f) => `test/${f}`)

rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
/**
 * The run's PGlite templates, each made once by the first test file that needs it (an empty
 * database, a migrated one, an initdb'd data directory: test/helpers.ts, test/process.ts), not
 * once per file; removed at the end.
 */
const TEMPLATES = mkdtempSync(join(tmpdir(), 'arbor-test-templates-'))
/**
 * On PostgreSQL (TEST_DATABASE_URL), the run's migrated database, made here before the first file
 * and dropped at the end: each file's fresh database is a copy of it (`create database … template`,
 * test/helpers.ts, test/process.ts), which takes milliseconds where running every migration on a
 * new database takes a third of a second or more. Nothing may stay connected to it (a copy needs
 * that), so it is migrated on a connection of its own, closed before the first file starts.
 */
const PG_URL = process.env.TEST_DATABASE_URL
const PG_TEMPLATE = PG_URL ? `arbor_test_template_${process.pid}` : ''
async function onPgServer(sql: string) {
  const { openPostgres } = await import('../src/db/postgres')
  const admin = await openPostgres(PG_URL!)
  try {
    await admin.exec(sql)
  } finally {
    await admin.close()
  }
}
if (PG_URL) {
  const { openPostgres } = await import('../src/db/postgres')
  const { migrate } = await import('../src/db/migrate')
  await onPgServer(`create database ${PG_TEMPLATE}`)
  const url = new URL(PG_URL)
  url.pathname = `/${PG_TEMPLATE}`
  const db = await openPostgres(url.toString())
  try {
    await migrate(db)
  } finally {
    await db.close()
  }
}
/** the run's templates go, on PostgreSQL too (also when the run is stopped: Ctrl-C, or SIGTERM) */
async function removeTemplates() {
  rmSync(TEMPLATES, { recursive: true, force: true })
  if (PG_URL) await onPgServer(`drop database if exists ${PG_TEMPLATE} with (force)`)
}
process.once('SIGINT', () => void removeTemplates().finally(() => process.exit(130)))
process.once('SIGTERM', () => void removeTemplates().finally(() => process.exit(143)))

interface Result {
  file: string
  pass: number
  fail: number
  skip: number
  ms: number
  /** CPU time (user and system) of the file's process and of the processes it waited for: its servers, Chromium */
  cpuMs: number
  ok: boolean
}

/** bun test's summary count (` 41 pass`), or null when the file ended without one. */
const count = (out: string, what: string) => {
  const m = new RegExp(`^ *(\\d+) ${what}$`, 'm').exec(out)
  return m ? Number(m[1]) : null
}

/** A file's output as the console shows a failure: without the `(pass)` lines and the JSON log lines, which stay in its log file. */
const failureText = (out: string) =>
  out
    .split('\n')
    .filter((l) => !l.startsWith('(pass)') && !/^\{"time":/.test(l))
    .join('\n')
    .trim()

async function runFile(file: string): Promise<Result> {
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, 'test', '--timeout', TIMEOUT_MS, file], {
    cwd: ROOT,
    env: {
      ...process.env,
      ARBOR_TEST_OUTPUT: OUT,
      ARBOR_TEST_TEMPLATES: TEMPLATES,
      ...(PG_URL && { ARBOR_TEST_PG_TEMPLATE: PG_TEMPLATE }),
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  // one stream in the order each was read: a log line lands near the test that wrote it
  let out = ''
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder()
    for await (const chunk of stream) out += d.decode(chunk, { stream: true })
  }
  await Promise.all([read(proc.stdout), read(proc.stderr)])
  const code = await proc.exited
  writeFileSync(join(OUT, `${basename(file)}.log`), out)
  const [pass, fail, skip] = [count(out, 'pass'), count(out, 'fail'), count(out, 'skip')]
  const ok = code === 0 && pass !== null && !fail
  if (!ok) {
    const why = pass === null ? `ended with exit status ${code} before its summary` : `${fail} fail`
    process.stdout.write(`\n${'='.repeat(20)} ${file}: ${why}\n${failureText(out)}\n${'='.repeat(20)}\n\n`)
  }
  const cpuMs = Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1000
  return { file, pass: pass ?? 0, fail: fail ?? (ok ? 0 : 1), skip: skip ?? 0, ms: performance.now() - started, cpuMs, ok }
}

const started = performance.now()
const results: Result[] = []
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
process.stdout.write(
  `${files.length} test files, ${workers} at a time; each file's output in test-output/logs/<file>.log` +
    `${all || named.length ? '' : ` (left to npm run test:all: ${everyFile.filter((f) => isSlow(f)).length} files that start the real server process or a browser, or time the machine)`}\n`,
)
if (pgliteOnly.length && !named.length)
  process.stdout.write(`left to the PGlite pass (the browser's side of the app, the same on either database): ${pgliteOnly.join(' ')}\n`)
/**
 * TEST_RETRIES (default 0; CI sets 1): a failed file runs again, alone in its process, up to that
 * many times. A file that passes only on a retry is named FLAKY at the end: it still needs a fix,
 * but one timing-dependent test on a loaded machine does not throw away the whole run.
 */
const retries = Math.max(0, Number(process.env.TEST_RETRIES) || 0)
const flaky: string[] = []
/** runs the files of `queue`, `n` at a time */
const runQueue = (queue: string[], n: number) =>
  Promise.all(
    Array.from({ length: Math.min(n, queue.length) }, async () => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        let r = await runFile(file)
        for (let k = 0; !r.ok && k < retries; k++) {
          process.stdout.write(`[retry ${k + 1}/${retries}] ${file} failed (above); running it again\n`)
          r = await runFile(file)
          if (r.ok) flaky.push(file)
        }
        results.push(r)
        const counts = `${r.pass} pass${r.skip ? `, ${r.skip} skip` : ''}${r.fail ? `, ${r.fail} FAIL` : ''}`
        process.stdout.write(
          `[${results.length}/${files.length}] ${r.ok ? 'ok  ' : 'FAIL'} ${file}  ${counts}  ${seconds(r.ms)} (CPU ${seconds(r.cpuMs)})\n`,
        )
      }
    }),
  )
const alone = (f: string) => workers > 1 && ALONE.test(basename(f))
await runQueue(
  files.filter((f) => !alone(f)),
  workers,
)
await runQueue(files.filter(alone), 1)

const failed = results.filter((r) => !r.ok)
const total = (k: 'pass' | 'fail' | 'skip') => results.reduce((n, r) => n + r[k], 0)
if (flaky.length) process.stdout.write(`\nFLAKY (failed, then passed on a retry; output in test-output/logs/): ${flaky.join(' ')}\n`)
if (failed.length) process.stdout.write(`\nFailed (output above and in test-output/logs/): ${failed.map((r) => r.file).join(' ')}\n`)
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5)
process.stdout.write(`\nSlowest: ${slowest.map((r) => `${r.file} ${seconds(r.ms)}`).join(', ')}\n`)
// how many cores the files kept busy on average (more than one: a second worker gains less than half)
const cpu = results.reduce((n, r) => n + r.cpuMs, 0)
const wall = performance.now() - started
process.stdout.write(`CPU of the files: ${seconds(cpu)} in ${seconds(wall)}, ${(cpu / wall).toFixed(2)} cores on average\n`)
// bun test's summary format, last: .ci/run reads these three lines
process.stdout.write(
  `\n ${total('pass')} pass\n ${total('fail')} fail\n ${total('skip')} skip\nRan ${files.length} files in ${seconds(wall)}\n`,
)
await removeTemplates()
process.exit(failed.length ? 1 : 0)
