/**
 * A small chat host for the plan view, built on ext-apps' host side as its basic host example
 * is: an MCP client on the server (here /mcp of the test's loopback proxy, which adds the key),
 * the tool's UI resource read and set into a sandboxed iframe, and an `AppBridge` between the
 * two that forwards the view's tool calls and takes its requests. What the view asks of the host
 * (model context, messages, sizes, display modes) is kept on `window.host` for the test to read.
 * Bundled for the browser by test/process.mcp-host.test.ts.
 */

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'

const UI = 'io.modelcontextprotocol/ui'
const MIME = 'text/html;profile=mcp-app'
const params = new URLSearchParams(location.search)
const projectId = params.get('projectId') ?? ''
const theme = params.get('theme') === 'dark' ? 'dark' : 'light'
const seen = {
  ready: false,
  text: '',
  modelContext: [] as unknown[],
  messages: [] as unknown[],
  sizes: [] as { width?: number; height?: number }[],
  displayModes: [] as string[],
  errors: [] as string[],
}
;(window as unknown as { host: typeof seen }).host = seen

const VARIABLES =
  theme === 'dark'
    ? { '--color-background-primary': 'rgb(24, 26, 33)', '--color-text-primary': 'rgb(230, 232, 238)', '--font-sans': 'Georgia, serif' }
    : { '--color-background-primary': 'rgb(250, 248, 240)', '--color-text-primary': 'rgb(20, 20, 30)', '--font-sans': 'Georgia, serif' }

async function main() {
  const client = new Client({ name: 'test-host', version: '1.0.0' }, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', location.href)))
  const { tools } = await client.listTools()
  const tool = tools.find((t) => t.name === 'open_plan')
  const uri = (tool?._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri
  const args = { projectId }
  const result = await client.callTool({ name: 'open_plan', arguments: args })
  // the model's side of the chat: the text, which a host without the extension shows alone
  seen.text = (result.content as { type: string; text?: string }[]).find((c) => c.type === 'text')?.text ?? ''
  document.querySelector('#transcript')!.textContent = `open_plan → ${seen.text.split('\n')[0]} …`
  if (!uri || params.has('noui')) return
  const { contents } = await client.readResource({ uri })
  const html = (contents[0] as { text?: string; mimeType?: string }).text ?? ''

  const iframe = document.createElement('iframe')
  iframe.setAttribute('sandbox', 'allow-scripts')
  iframe.title = 'Arbor plan'
  document.querySelector('#chat')!.append(iframe)
  type Context = NonNullable<ConstructorParameters<typeof AppBridge>[3]>['hostContext']
  const hostContext: Context = {
    theme,
    styles: { variables: VARIABLES as unknown as NonNullable<NonNullable<Context>['styles']>['variables'] },
    displayMode: 'inline',
    availableDisplayModes: ['inline', 'fullscreen'],
    containerDimensions: { maxHeight: 640, width: Math.min(760, window.innerWidth - 24) },
    platform: 'web',
  }
  const bridge = new AppBridge(
    client,
    { name: 'test-host', version: '1.0.0' },
    { serverTools: {}, serverResources: {}, openLinks: {}, logging: {}, updateModelContext: { text: {} }, message: { text: {} } },
    { hostContext },
  )
  bridge.onupdatemodelcontext = async (p) => {
    seen.modelContext.push(p)
    return {}
  }
  bridge.onmessage = async (p) => {
    seen.messages.push(p)
    document.querySelector('#transcript')!.textContent += `\nuser (from the view): ${(p.content[0] as { text: string }).text}`
    return {}
  }
  bridge.onsizechange = (p) => {
    seen.sizes.push(p)
    if (p.height) iframe.style.height = `${Math.min(p.height, 640)}px`
  }
  bridge.onrequestdisplaymode = async (p) => {
    seen.displayModes.push(p.mode)
    document.body.classList.toggle('fullscreen', p.mode === 'fullscreen')
    bridge.sendHostContextChange({ displayMode: p.mode })
    return { mode: p.mode }
  }
  bridge.oninitialized = () => {
    seen.ready = true
    void bridge.sendToolInput({ arguments: args })
    void bridge.sendToolResult(result as Parameters<typeof bridge.sendToolResult>[0])
  }
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!))
  iframe.srcdoc = html
}

main().catch((err: Error) => {
  seen.errors.push(err.message)
  document.querySelector('#transcript')!.textContent = `host error: ${err.message}`
})
