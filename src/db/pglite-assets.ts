import initdbPath from '@electric-sql/pglite/initdb.wasm' with { type: 'file' }
import dataPath from '@electric-sql/pglite/pglite.data' with { type: 'file' }
import wasmPath from '@electric-sql/pglite/pglite.wasm' with { type: 'file' }

/**
 * PGlite finds its wasm and data files next to its own module at run time, which a
 * `bun build --compile` binary does not have. Imported `with { type: 'file' }`, Bun embeds
 * them in the binary (and gives their node_modules path otherwise). Compiled once per process.
 */
let assets: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined

export function pgliteAssets() {
  assets ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(wasmPath).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbPath).arrayBuffer()),
    fsBundle: Bun.file(dataPath),
  }))()
  return assets
}
