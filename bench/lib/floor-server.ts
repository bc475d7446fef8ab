/**
 * The floor of a read: a bare Bun.serve, in its own process, that answers every request with
 * the bytes in the file `argv[2]` and the Content-Type `argv[3]` — what the real server answered
 * for that read, with nothing computed. Prints {"port": n} once listening.
 *
 *   bun bench/lib/floor-server.ts <body file> <content-type>
 */
const [file, contentType] = process.argv.slice(2)
if (!file || !contentType) throw new Error('usage: bun bench/lib/floor-server.ts <body file> <content-type>')
// a Blob, as the real server keeps its answers: a Response shares a Blob's bytes, where it copies a Uint8Array's
const body = new Blob([await Bun.file(file).arrayBuffer()])
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => new Response(body, { headers: { 'content-type': contentType } }),
})
console.log(JSON.stringify({ port: server.port }))

export {}
