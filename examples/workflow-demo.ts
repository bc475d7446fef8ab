/**
 * An agent loop that drives an Arbor workflow with any OpenAI-compatible chat model.
 *
 *   ARBOR_API_KEY=arb_… LLM_URL=http://127.0.0.1:11434/v1 LLM_MODEL=qwen2.5:14b \
 *     bun run workflow:demo -- --project my-project --flow add --input "Export the weekly summary as CSV"
 *
 * Environment: ARBOR_API_URL (default http://localhost:3000/api/v1), ARBOR_API_KEY, LLM_URL (the
 * base URL that /chat/completions hangs under), LLM_MODEL, LLM_API_KEY (optional).
 * Options: --project <id> (or ARBOR_PROJECT_ID), --flow add|task-curate|phase-assign,
 * --input <text> (add), --yes (accept every proposal without asking; without a terminal and
 * without --yes, promotions and discards are skipped and clarifying questions go unanswered).
 *
 * The loop: start the flow, send each prompt to the model, parse its one JSON object and
 * advance with it. A 400 with retry:true goes back to the model with Arbor's reason, and the
 * same state is advanced again. Exit code 0 when the flow is done, 1 otherwise.
 */

type Json = Record<string, any>
type Message = { role: 'system' | 'user' | 'assistant'; content: string }

const MAX_STEPS = 12
const MAX_RETRIES = 3
const SYSTEM =
  'You are a careful planning assistant. Answer every message with exactly one JSON object that follows the shape the message asks for, and nothing else: no prose, no code fences.'

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}

function need(value: string | undefined, what: string): string {
  if (!value) {
    console.error(`workflow-demo: ${what} is required`)
    process.exit(2)
  }
  return value
}

/** The model's one JSON object, also when it wrapped it in a code fence or a sentence. */
export function extractJson(text: string): Json | null {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)
  const candidates = [text.trim(), fenced?.[1]?.trim() ?? '']
  const first = text.indexOf('{')
  const last = text.lastIndexOf('}')
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1))
  for (const c of candidates) {
    if (!c) continue
    try {
      const parsed = JSON.parse(c)
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed
    } catch {}
  }
  return null
}

async function main() {
  const args = process.argv.slice(2)
  const api = (process.env.ARBOR_API_URL || 'http://localhost:3000/api/v1').replace(/\/+$/, '')
  const key = need(process.env.ARBOR_API_KEY, 'ARBOR_API_KEY')
  const llmUrl = need(process.env.LLM_URL, 'LLM_URL').replace(/\/+$/, '')
  const model = need(process.env.LLM_MODEL, 'LLM_MODEL')
  const projectId = need(option(args, 'project') ?? process.env.ARBOR_PROJECT_ID, '--project')
  const flow = option(args, 'flow') ?? 'add'
  const input = option(args, 'input')
  const yes = args.includes('--yes')
  const interactive = !yes && process.stdin.isTTY === true

  const arbor = async (body: Json) => {
    const res = await fetch(`${api}/workflow`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId, ...body }),
    })
    return { status: res.status, body: (await res.json()) as Json }
  }

  const chat = async (messages: Message[]): Promise<string> => {
    const res = await fetch(`${llmUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(process.env.LLM_API_KEY ? { authorization: `Bearer ${process.env.LLM_API_KEY}` } : {}),
      },
      body: JSON.stringify({ model, messages, temperature: 0, response_format: { type: 'json_object' } }),
    })
    if (!res.ok) throw new Error(`the model answered ${res.status}: ${(await res.text()).slice(0, 500)}`)
    const body = (await res.json()) as Json
    return String(body.choices?.[0]?.message?.content ?? '')
  }

  const ask = (question: string): string | undefined => {
    if (!interactive) return undefined
    const answer = prompt(`${question}\n> `)
    return answer?.trim() || undefined
  }

  /** task-curate: promotions and discards only with the user's consent (the start tip says so). */
  const confirmActions = (answer: Json) => {
    if (flow !== 'task-curate' || !Array.isArray(answer.actions)) return answer
    const actions = answer.actions.map((a: Json) => {
      if (a.action !== 'promote' && a.action !== 'discard') return a
      if (yes) return a
      const ok = interactive && /^y/i.test(ask(`${a.action} ${a.taskId}? [y/N]`) ?? '')
      return ok ? a : { taskId: a.taskId, action: 'skip' }
    })
    return { ...answer, actions }
  }

  let res = await arbor({ action: 'start', flow, ...(input === undefined ? {} : { input }) })
  if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`)
  if (res.body._meta?._tip) console.log(`tip: ${res.body._meta._tip}`)

  for (let step = 0; !res.body.done; step++) {
    if (step >= MAX_STEPS) throw new Error(`no end after ${MAX_STEPS} steps`)
    const state = res.body.state as string
    const messages: Message[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: res.body.prompt },
    ]
    for (let attempt = 0; ; attempt++) {
      if (attempt > MAX_RETRIES) throw new Error(`the model did not give an accepted answer in ${MAX_RETRIES + 1} tries`)
      const text = await chat(messages)
      messages.push({ role: 'assistant', content: text })
      const parsed = extractJson(text)
      if (!parsed) {
        messages.push({ role: 'user', content: 'That was not one JSON object. Answer again with exactly one JSON object.' })
        continue
      }
      const answer = confirmActions(parsed)
      console.log(`step ${step + 1} (${res.body._meta?.step ?? '?'}): ${answer.signal} ${answer.message ?? ''}`.trim())
      let nextInput: string | undefined
      if (typeof answer.message === 'string' && answer.message && answer.signal !== 'draft_ready')
        nextInput = ask(answer.signal === 'needs_clarification' ? answer.message : `${answer.message} (Enter to agree)`)
      const next = await arbor({ action: 'advance', state, response: answer, ...(nextInput ? { nextInput } : {}) })
      if (next.status === 400 && next.body.retry === true) {
        console.log(`  refused: ${next.body.error}`)
        messages.push({
          role: 'user',
          content: `Arbor refused that answer: ${next.body.error}\nAnswer again with one corrected JSON object.`,
        })
        continue
      }
      if (next.status !== 200) throw new Error(`advance: ${next.status} ${JSON.stringify(next.body)}`)
      res = next
      break
    }
  }

  console.log(`done: ${res.body.message}`)
  for (const c of res.body.changeset as Json[])
    console.log(`  ${c.action} ${c.nodeId ?? c.after?.name ?? ''} ${c.after?.data?.label ?? ''}`.trimEnd())
  console.log(JSON.stringify({ changeset: res.body.changeset, focus: res.body.focus, viewCommand: res.body._meta?.viewCommand }))
}

if (import.meta.main)
  main().catch((err) => {
    console.error(`workflow-demo: ${err instanceof Error ? err.message : err}`)
    process.exit(1)
  })
