/**
 * npm run bench:mcp — the size of the MCP server's whole tools/list, in tokens, as an agent's
 * context receives it. The list is fetched with the SDK's own client from the real server
 * (linked in memory: tools/list calls no API), serialised as on the wire, and counted with
 * OpenAI's BPE tokenizers (gpt-tokenizer: o200k_base of GPT-4o and later, cl100k_base of GPT-4).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client'
import { encode as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { encode as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { createMcpServer } from '../src/mcp/server'

export async function measureToolList() {
  const server = createMcpServer({ apiUrl: 'http://localhost:3000/api/v1', apiKey: 'arb_unused' })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'bench', version: '1' })
  await Promise.all([server.connect(serverSide), client.connect(clientSide)])
  const { tools } = await client.listTools()
  await client.close()
  const count = (v: unknown) => {
    const text = JSON.stringify(v)
    return { bytes: Buffer.byteLength(text), o200k: o200k(text).length, cl100k: cl100k(text).length }
  }
  // a host shows a model only the tools without visibility ["app"] (agents-and-app.md section 6)
  const model = tools.filter((t) => (t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.join() !== 'app')
  return { whole: count({ tools: model }), perTool: tools.map((t) => ({ name: t.name, ...count(t) })) }
}

if (import.meta.main) {
  const { whole, perTool } = await measureToolList()
  console.log('| tool | bytes | tokens (o200k_base) | tokens (cl100k_base) |\n|---|---:|---:|---:|')
  for (const t of perTool) console.log(`| ${t.name} | ${t.bytes} | ${t.o200k} | ${t.cl100k} |`)
  console.log(`| **the model's tools/list** | ${whole.bytes} | ${whole.o200k} | ${whole.cl100k} |`)
}
