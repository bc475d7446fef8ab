import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/** One browser module (minified ESM) out of a TypeScript entry, bundled by Bun.build: the live canvas's, the MCP plan view's. */
export async function bundleScript(entry: string, what: string): Promise<string> {
  const out = await Bun.build({ entrypoints: [entry], target: 'browser', format: 'esm', minify: true })
  if (!out.success || !out.outputs[0]) throw new AggregateError(out.logs, `${what} did not build`)
  return out.outputs[0].text()
}

/** `bun src/web/<bundle>.ts <dir>` (`npm run build`): write the script to <dir>/<file> for the single executable. */
export async function writeScript(build: () => Promise<string>, file: string) {
  const dir = process.argv[2] ?? 'dist/assets'
  mkdirSync(dir, { recursive: true })
  const js = await build()
  await Bun.write(join(dir, file), js)
  console.log(`${join(dir, file)}: ${js.length} bytes`)
}
