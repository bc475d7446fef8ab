import { connect, createServer, type Socket } from 'node:net'

/**
 * A real TCP proxy in front of PostgreSQL for tests: what the database sends back can be held
 * (`hold`) and let go in order (`release`), as a slow or stalled network would. What the client
 * sends goes through at once, so the database runs the statements meanwhile.
 */
export async function startLagProxy(target: { host: string; port: number }) {
  let held = false
  const pending: (() => void)[] = []
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    sockets.add(client).add(upstream)
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => {
      if (held) pending.push(() => client.write(chunk))
      else client.write(chunk)
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    port,
    hold() {
      held = true
    },
    release() {
      held = false
      for (const write of pending.splice(0)) write()
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
