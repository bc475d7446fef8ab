import { ENUMS, FIELDS, LIMITS as NODE_LIMITS } from '../nodes/model'
import type { Turn } from './model'
import addClassify from './prompts/add-classify.md' with { type: 'text' }
import addCommon from './prompts/add-common.md' with { type: 'text' }
import addConfirm from './prompts/add-confirm.md' with { type: 'text' }
import addDraft from './prompts/add-draft.md' with { type: 'text' }
import fieldRulesMd from './prompts/field-rules.md' with { type: 'text' }
import intro from './prompts/intro.md' with { type: 'text' }
import phaseAssign from './prompts/phase-assign.md' with { type: 'text' }
import taskCurate from './prompts/task-curate.md' with { type: 'text' }

/**
 * The prompts live in prompts/*.md; this file only fills their `{{placeholders}}`. The node
 * rules are written from the node model (nodes/model.ts) so a prompt never states a rule that
 * mutate does not check.
 */
export const TEMPLATES = new Map([
  ['add-common', addCommon],
  ['add-classify', addClassify],
  ['add-confirm', addConfirm],
  ['add-draft', addDraft],
  ['task-curate', taskCurate],
  ['phase-assign', phaseAssign],
])

/** Replace each `{{name}}`; a placeholder without a value is a bug, not something to send. */
export function fill(template: string, values: Map<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const v = values.get(name)
    if (v === undefined) throw new Error(`prompt placeholder {{${name}}} has no value`)
    return v
  })
}

const fieldLines = Object.entries(FIELDS)
  .filter(([field]) => !['kind', 'urgent', 'completedAt'].includes(field))
  .map(([field, rule]) => `  - ${field}: on ${rule.on.join(', ')}`)
  .join('\n')
const enumLines = Object.entries(ENUMS)
  .filter(([field]) => field !== 'kind')
  .map(([field, values]) => `  - ${field}: ${values.filter((v) => v !== 'delivered' && v !== 'performance').join(' | ')}`)
  .join('\n')

export const FIELD_RULES = fill(
  fieldRulesMd,
  new Map([
    ['labelChars', String(NODE_LIMITS.labelLength)],
    ['textChars', String(NODE_LIMITS.textLength)],
    ['fields', fieldLines],
    [
      'enums',
      `${enumLines}\n  - serves: at most ${NODE_LIMITS.serves} need ids; externalRefs: at most ${NODE_LIMITS.externalRefs} {system, key, url (https://)}`,
    ],
  ]),
).trimEnd()

export const introFor = (projectId: string) => fill(intro, new Map([['projectId', projectId]])).trimEnd()

/** The turns so far, oldest first; empty when there are none. */
export function conversation(history: Turn[]): string {
  if (!history.length) return ''
  const lines = history.map((t) =>
    t.by === 'user' ? `- User: ${t.text}` : `- You (${t.signal ?? 'answer'}): ${t.text}${t.context ? ` ${JSON.stringify(t.context)}` : ''}`,
  )
  return `\n## The conversation so far (oldest first)\n${lines.join('\n')}\n`
}

/** What the prompt says about the user's last word on the model's last answer. */
export function userSaid(history: Turn[]): string {
  const last = history.at(-1)
  if (last?.by === 'user') return `The user answered: ${JSON.stringify(last.text)}. Take it into account.`
  return 'The user did not object, so proceed as if they agreed.'
}
