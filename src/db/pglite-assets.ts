import initdbPath from '@electric-sql/pglite/initdb.wasm' with { type: 'file' }
import dataPath from '@electric-sql/pglite/pglite.data' with { type: 'file' }
import wasmPath from '@electric-sql/pglite/pglite.wasm' with { type: 'file' }

/**
 * PGlite finds its wasm and data files next to its own module at run time, which a
 * `bun build --compile` binary does not have. Imported `with { type: 'file' }`, Bun embeds
 * them in the binary (and gives their node_modules path otherwise). Each compiled once per
 * process, initdb's only when asked for: PGlite runs it only for a cluster it must create
 * (a start on an existing DATA_DIR never does; see openPglite).
 */
const assets: { pglite?: Promise<WebAssembly.Module>; initdb?: Promise<WebAssembly.Module> } = {}

export async function pgliteAssets(opts: { initdb: boolean }) {
  assets.pglite ??= (async () => WebAssembly.compile(await Bun.file(wasmPath).arrayBuffer()))()
  if (opts.initdb) assets.initdb ??= (async () => WebAssembly.compile(await Bun.file(initdbPath).arrayBuffer()))()
  return {
    pgliteWasmModule: await assets.pglite,
    ...(opts.initdb ? { initdbWasmModule: await assets.initdb } : {}),
    fsBundle: Bun.file(dataPath),
  }
}
