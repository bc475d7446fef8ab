/**
 * The `mutate` tool's arguments, derived from the action schemas of POST /mutate
 * (ACTION_BODIES, src/mutate/model.ts; those with a tool of their own left out): `action`'s description lists each action's
 * fields and purpose, one level deep. The full union (every node field of every type) would
 * cost an agent thousands of tokens on every turn; the route checks the body with the same
 * schemas and answers a mistake with its message and `_tip`.
 */
import { Kind, OptionalKind, type TSchema, Type } from '@sinclair/typebox'
import { ACTION_BODIES } from '../mutate/model'
import { ACTION_NAMES, type ActionName } from '../ports/actions'

const COMMON = new Set(['action', 'projectId', 'idempotencyKey'])

/** Actions with a tool of their own (claim_work, release_work): left out of mutate, so each thing has one way and no second description. */
export const OWN_TOOL_ACTIONS: ReadonlySet<ActionName> = new Set<ActionName>(['claim', 'releaseClaim'])
/**
 * Actions the tool does not describe (live.md §5: agents propose, people decide): applying and
 * rejecting a proposal are a person's, in the app or through the API; the route still takes them.
 */
export const PEOPLE_ACTIONS: ReadonlySet<ActionName> = new Set<ActionName>(['applyProposal', 'rejectProposal'])
const MUTATE_ACTIONS = ACTION_NAMES.filter((name) => !OWN_TOOL_ACTIONS.has(name) && !PEOPLE_ACTIONS.has(name)).map(
  (name) => [name, ACTION_BODIES[name]] as const,
)

const optional = (s: TSchema) => (s[OptionalKind] === 'Optional' ? '?' : '')

/**
 * A part's shape, one level deep: `{a,b?}` for an object or a union of objects (their keys),
 * `[…]` for an array of such, `add|update entries` for a union told apart by `action`.
 */
function shape(schema: TSchema): string {
  if (schema[Kind] === 'Array') {
    const inner = shape(schema.items)
    return inner && `[${inner}]`
  }
  const objects: TSchema[] =
    schema[Kind] === 'Object' ? [schema] : schema[Kind] === 'Union' ? schema.anyOf.filter((s: TSchema) => s[Kind] === 'Object') : []
  if (!objects.length) return ''
  const tags = objects.map((o) => o.properties.action?.const)
  if (tags.every((t) => typeof t === 'string')) return `${tags.join('|')} entries (no projectId)`
  const keys = new Map<string, TSchema>()
  for (const o of objects) for (const [k, v] of Object.entries(o.properties as Record<string, TSchema>)) if (!keys.has(k)) keys.set(k, v)
  return `{${[...keys].map(([k, v]) => k + optional(v)).join(',')}}`
}

export function actionSummaries(): string {
  // a shape already spelled out (propose's mutations, as batch's) is named by the action that has it
  const seen = new Map<string, string>()
  return MUTATE_ACTIONS.map(([name, body]) => {
    const fields = Object.entries(body.properties as Record<string, TSchema>)
      .filter(([k]) => !COMMON.has(k))
      .map(([k, v]) => {
        const inner = shape(v)
        const first = seen.get(`${k}=${inner}`)
        if (inner && !first) seen.set(`${k}=${inner}`, name)
        return `${k}${optional(v)}${inner ? `:${first ? `as ${first}` : inner}` : ''}`
      })
    return `${name} {${fields.join(',')}}: ${body.description}`
  }).join(' | ')
}

export const MutateArgs = Type.Object(
  {
    projectId: Type.String(),
    // the actions are named in the description, not as an enum: the route refuses an unknown one with the list, and
    // an action added to POST /mutate (history's revert) is never refused here first
    action: Type.String({ description: actionSummaries() }),
    idempotencyKey: Type.Optional(Type.String({ description: 'Idempotency-Key: a retry applies once' })),
  },
  { additionalProperties: true },
)
