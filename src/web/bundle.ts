import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The live canvas's script: the TypeScript of src/web/client bundled by Bun.build into one
 * browser module. A source checkout bundles it in memory on the first request; the single
 * executable carries the bundle `npm run build` made (`bun src/web/bundle.ts dist/assets`,
 * embedded by src/binary.ts), since it has no source files to bundle.
 */
let bundled: string | undefined

/** The single executable hands over the bundle it embeds. */
export function useBundledCanvas(js: string) {
  bundled = js
}

export async function buildCanvas(): Promise<string> {
  const out = await Bun.build({
    entrypoints: [join(import.meta.dir, 'client', 'main.ts')],
    target: 'browser',
    format: 'esm',
    minify: true,
  })
  if (!out.success || !out.outputs[0]) throw new AggregateError(out.logs, 'the live canvas script did not build')
  return out.outputs[0].text()
}

/** The script to serve: the embedded bundle, or one built now. */
export const canvasScript = (): Promise<string> => (bundled !== undefined ? Promise.resolve(bundled) : buildCanvas())

// `bun src/web/bundle.ts <dir>`: write <dir>/canvas.js for the single executable
if (import.meta.main) {
  const dir = process.argv[2] ?? 'dist/assets'
  mkdirSync(dir, { recursive: true })
  const js = await buildCanvas()
  await Bun.write(join(dir, 'canvas.js'), js)
  console.log(`${join(dir, 'canvas.js')}: ${js.length} bytes`)
}
