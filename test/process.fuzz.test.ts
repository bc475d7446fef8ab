import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { type ServerProcess, startServer } from './process'

// What the outside fuzzer (test/fuzz/run.sh) found that only a real server shows.

/** One HTTP/1.1 GET on a raw socket: Bun's fetch retries a GET whose connection closed, which hides the bug. */
function rawGet(url: string, path: string, key: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`),
    )
    let text = ''
    socket.on('data', (chunk) => (text += chunk.toString()))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}

describe('fuzz findings on the real server', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  }, 60_000)
  afterAll(() => server.close())

  it("keeps a long poll open past Bun's 10-second idle timeout: GET /view/commands answers after its wait", async () => {
    const created = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Poll', id: 'poll' } } })
    expect(created.status).toBe(200)
    const started = Date.now()
    const answer = await rawGet(server.url, '/api/v1/view/commands?projectId=poll&wait=12000', server.ownerKey)
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
    expect(answer).toMatch(/\{"commands":\[\],"revision":"[0-9_]*"\}$/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(11_000)
  }, 30_000)
})
