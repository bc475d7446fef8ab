/**
 * A webhook receiver as its own process (`bun bench/lib/receiver.ts`): answers every POST with
 * 200 and prints its port, then one line per second with how many deliveries it got so far.
 */
let received = 0
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    await req.arrayBuffer()
    received++
    return new Response('ok')
  },
})
console.log(JSON.stringify({ port: receiver.port }))
setInterval(() => console.log(JSON.stringify({ received })), 1000)

export {}
