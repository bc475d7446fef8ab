import { join } from 'node:path'
import { bundleScript, writeScript } from './build-script'

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

export const buildCanvas = (): Promise<string> => bundleScript(join(import.meta.dir, 'client', 'main.ts'), 'the live canvas script')

/** The script to serve: the embedded bundle, or one built now. */
export const canvasScript = (): Promise<string> => (bundled !== undefined ? Promise.resolve(bundled) : buildCanvas())

// `bun src/web/bundle.ts <dir>`: write <dir>/canvas.js for the single executable
if (import.meta.main) await writeScript(buildCanvas, 'canvas.js')
