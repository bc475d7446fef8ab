#!/usr/bin/env node
// `arbor` from a checkout (`npx arbor …`, `npm exec arbor …`, or this file's path): runs
// src/cli/main.ts on the Bun that `npm install` put in node_modules, with this process's stdin,
// stdout and stderr handed over as they are. Nothing is printed here, so `arbor mcp`'s standard
// output carries MCP alone (unlike `npm run mcp`, which starts with npm's banner line).
import { spawn } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { constants } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))))
const bun = join(root, 'node_modules', 'bun', 'bin', 'bun.exe')
if (!existsSync(bun)) {
  process.stderr.write(`arbor: Bun is not installed in ${join(root, 'node_modules')}; run npm install in ${root} first\n`)
  process.exit(1)
}
const child = spawn(bun, [join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' })
// A signal sent to this process alone (a client stopping its server) is passed on; Ctrl+C in a
// terminal reaches the child itself, so it is not sent twice.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(signal, () => (signal === 'SIGINT' && process.stdin.isTTY ? undefined : child.kill(signal)))
child.on('error', (err) => {
  process.stderr.write(`arbor: could not start ${bun}: ${err.message}\n`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1))
})
