/**
 * Offline, deterministic classifier for inbox tasks.
 *
 *   memo  - something to keep: ideas, quotes, observations, data points, notes,
 *           decisions taken, standing rules ("Never ship on Fridays").
 *   do-it - a concrete action with a done state, including defects reported in
 *           our own product ("Invoice PDF cuts off long names").
 *   urgent - only a do-it, and only when it cannot wait past today.
 *
 * It reads the shape of the text, not its topic: how the first clause starts
 * (imperative verb, note-taking prefix, hedge, reported speech), defect idioms,
 * obligations and deadlines, and for urgency the kind of harm and its timing.
 * Word lists live in classify-lexicon.ts. Pure, synchronous, a few µs per item.
 */
import * as L from './classify-lexicon'

export type TaskKind = 'memo' | 'do-it'
export interface ClassifyInput {
  label: string
  description?: string | null
}
export interface Classification {
  kind: TaskKind
  urgent: boolean
}

/** Unify quotes and dashes, drop parentheticals ("(Lumen Studio)"). Case is kept for names. */
function normalize(text: string): string {
  return text
    .replace(/[\u2018\u2019\u201a\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201e\u2033]/g, '"')
    .replace(/\s+[\u2013\u2014-]+\s+/g, ' - ')
    .replace(/\s*\([^)]*\)/g, '')
    .replace(/\bdata points?\b/gi, 'datapoint')
    .replace(/\s+/g, ' ')
    .trim()
}

/** Remove quoted passages so that words inside a quote are not read as ours. */
function dropQuotes(t: string): string {
  return t.replace(/(^|[\s:])(["'])(?:[^"']|'\w)+?\2(?=[\s.,;:!?]|$)/g, '$1""')
}

/** Clauses: split at ": ", " - ", "; " and sentence ends. */
function clauses(t: string): string[] {
  return t
    .split(/:\s+|\s-\s|;\s+|[.!?]\s+/)
    .map((c) => c.trim())
    .filter(Boolean)
}

function words(clause: string): string[] {
  return clause
    .split(/\s+/)
    .map((w) => w.replace(/^[^\w@#$'"]+|[^\w%']+$/g, ''))
    .filter(Boolean)
}

/** "Prefix: rest" when the prefix is short: a heading that tells the genre. */
function splitHead(t: string): { head: string; rest: string } | null {
  const m = /^(.{1,60}?)(?::\s|\s-\s|,\s)(.*)$/.exec(t)
  if (!m || words(m[1]).length > 6) return null
  return { head: m[1].trim(), rest: m[2].trim() }
}

const LEADING_FILLER = /^(please|pls|then|also|and|so|just|quickly|urgently|asap|now|ok|first|finally|let's|lets)\s+/

/**
 * Does the clause start like an order? Unambiguous verbs count at once; words
 * that are as often nouns ("Review", "Order", "Support") count only when the
 * next word reads as their object (determiner, pronoun, name, number) or no
 * finite verb follows ("Support volume dropped" is a statement).
 */
export function isImperative(clause: string): boolean {
  let c = clause.replace(/^["'\s]+/, '')
  while (LEADING_FILLER.test(c.toLowerCase())) c = c.replace(/^\S+\s+/, '')
  if (L.PHRASAL.test(c.toLowerCase())) return true
  const raw = words(c)
  const w = raw.map((x) => x.toLowerCase())
  const first = w[0]
  if (!first || !(L.VERBS.has(first) || L.AMBIGUOUS_VERBS.has(first))) return false
  const next = w[1]
  if (!next) return true // a bare verb: "Investigate."
  if (L.FINITE.has(next)) return false // "Sync is slow"
  if (!L.AMBIGUOUS_VERBS.has(first)) return !L.FINITE.has(w[2] ?? '')
  if (/^(with|of|on|in|at|for)$/.test(next)) return false // "Call with…", "Map on the left": a noun
  if (L.MEMO_NOUNS.has(next)) return false // compound noun: "Book recommendation"
  if (L.OBJECT_START.has(next) || /^[\d"'$#@]/.test(next)) return true
  if (/^[A-Z]/.test(raw[1])) return true // a name: "Call Lumen back"
  return !w.slice(1, 4).some((x) => L.FINITE.has(x) || (x.length > 4 && x.endsWith('ed')))
}

/** A defect report: failure idioms that nothing explains away. */
export function isDefect(text: string): boolean {
  // "most failed deliveries", "20 failed syncs": a count of events, not a symptom
  const t = text.toLowerCase().replace(/\b(most|many|fewer|more than \d+|\d+%?( of)?) failed\b/g, '')
  return (L.DEFECT.test(t) || L.SECURITY.test(t) || L.OUTAGE.test(t)) && !L.DEFECT_VETO.test(t)
}

/** Any do-it cue other than the genre of a heading. */
function actionCue(text: string): boolean {
  const t = text.toLowerCase()
  return (
    clauses(text).some((c) => isImperative(c) || L.OBLIGATION.test(c.toLowerCase())) ||
    L.OBLIGATION.test(t) ||
    L.REQUEST.test(t) ||
    L.QUESTION_TASK.test(t) ||
    L.DELIVERABLE_TO.test(t) ||
    L.REMIND_TO_ACT.test(t)
  )
}

/** Words that tie a memo noun to what it is about: "Lesson from…", "Theme for…". */
const LINKERS = /^(from|by|of|in|at|for|on|about|we|i|re|after|during|behind|that)$/

/**
 * A heading whose genre says "keep this": "Idea:", "Thought experiment:", "Q3
 * offsite outcome:" (strong), or "Lesson from…", "Design principle we…" (weak:
 * an explicit order later on still wins, as in "Quote for Acme - send it").
 */
function memoHeading(t: string, head: ReturnType<typeof splitHead>): 'strong' | 'weak' | null {
  if (head) {
    const hw = words(head.head)
    const last = hw[hw.length - 1]
    if (L.MEMO_NOUNS.has(last) || L.REVIEW_GENRE.test(head.head)) return 'strong'
    // a memo noun inside the heading, unless the heading names a chore ("Idea board clean-up")
    const compound = hw.some((x, i) => L.MEMO_NOUNS.has(x) && i + 1 < hw.length && !LINKERS.test(hw[i + 1]))
    if (compound && !L.ACTION_NOUNS.has(last) && !L.VERBS.has(hw[0])) return 'strong'
  }
  // "<noun> <memo-noun> from/of/in/…": "Lesson from…", "Design principle we agreed on…"
  const w = words(t).slice(0, 5)
  const verbFirst = L.VERBS.has(w[0]) // an unambiguous verb: "Get a quote from…" is an order
  for (let i = 0; i < Math.min(4, w.length - 1); i++) {
    if (!L.MEMO_NOUNS.has(w[i]) || !LINKERS.test(w[i + 1])) continue
    if (i === 0 && L.GENRE_NOUNS.has(w[0])) return 'strong'
    if (i === 0 || (!verbFirst && (i === 1 || !L.AMBIGUOUS_VERBS.has(w[0])))) return 'weak'
  }
  return null
}

/** memo or do-it, from the label (and the description when the label is silent). */
function decideKind(label: string, desc: string, prioritised: boolean): { kind: TaskKind; defect: boolean } {
  const raw = dropQuotes(label) // case kept: imperative checks look for names
  const t = raw.toLowerCase()
  const defect = isDefect(t) || (!!desc && (isDefect(desc) || L.EXPECTED_BEHAVIOUR.test(desc.toLowerCase())))
  const head = splitHead(t)
  const timeless = !L.TIME_BOUND.test(t)

  // 1. "Remember to X" asks for an action; "Never ship…", "Always CC…" are rules to keep,
  //    unless tied to a date: "Don't let the cert lapse - renews Thursday" is a task.
  if (L.REMIND_TO_ACT.test(t)) return { kind: 'do-it', defect }
  if (L.RULE_START.test(t)) return { kind: timeless ? 'memo' : 'do-it', defect }
  if (/^(we |i )?(still )?(need|must|have to|has to)\b/.test(t)) return { kind: 'do-it', defect } // "Need a decision on…"
  // 2. Headings: "Bug: …" is a task; "Idea: …", "Notes from…" are memos.
  if (head && L.TASK_PREFIX.test(head.head) && words(head.head).length <= 2) return { kind: 'do-it', defect }
  const genre = memoHeading(t, head)
  if (genre === 'strong') return { kind: 'memo', defect }
  if (genre === 'weak') {
    const ordered = clauses(raw)
      .slice(1)
      .some((c) => isImperative(c))
    return { kind: ordered ? 'do-it' : 'memo', defect }
  }
  // 3. Reported speech ("Acme's CFO: '…'", "Feedback: …") is a memo unless it reports a defect.
  const speaker = L.SPEAKER_QUOTE.test(label) || (head && L.REPORT_NOUNS.has(words(head.head).pop() ?? ''))
  if (speaker) return { kind: isDefect(label) ? 'do-it' : 'memo', defect }
  // 4. Attention prefixes ("FYI", "Reminder:", "Watch out:") keep a fact unless an order follows.
  if (L.ATTENTION.test(t)) {
    const rest = splitHead(raw)?.rest ?? ''
    return { kind: rest && actionCue(rest) ? 'do-it' : 'memo', defect }
  }
  // 5. Ideas, possibilities and past-tense reports are kept, unless they report a defect.
  if (L.HEDGE_START.test(t) && !L.REQUEST.test(t)) return { kind: 'memo', defect }
  if (L.REPORT_START.test(t)) return { kind: defect ? 'do-it' : 'memo', defect }
  // 6. Meetings/nominalised tasks: "Coffee with X next month" is a do-it, but
  //    "Sales call with X - they need Y" is the notes of a meeting held.
  if (L.TASK_NOUN.test(t)) {
    const later = clauses(raw).slice(1)
    const notes = later.length > 0 && !later.some((c) => isImperative(c) || L.OBLIGATION.test(c.toLowerCase())) && !defect
    return { kind: notes ? 'memo' : 'do-it', defect }
  }
  // 7. Orders, obligations, requests, defects.
  if (actionCue(raw) || defect) return { kind: 'do-it', defect }
  // 8. A silent label: an order in the description still makes it a task.
  if (desc && isImperative(clauses(dropQuotes(desc))[0] ?? '')) return { kind: 'do-it', defect }
  // 9. Only backlog items carry a priority tag ("Low priority: dark mode"); else a fact to keep.
  return { kind: prioritised ? 'do-it' : 'memo', defect }
}

/**
 * Urgent = cannot wait past today. Taken-back urgency ("Not urgent:", "no rush")
 * wins; a deadline today/tomorrow, a data exposure or an outage is enough alone;
 * otherwise harm signals add up (money/legal harm, breadth, "since this morning",
 * emergency actions like "roll back") and a far horizon or narrow scope subtract.
 * The bare words "urgent"/"critical"/"emergency" are ignored on purpose: they
 * appear in compound nouns, quotes and hypotheticals far more than in real alarms.
 */
function decideUrgent(text: string, defect: boolean): boolean {
  const t = dropQuotes(text).toLowerCase()
  if (L.NOT_URGENT.test(t)) return false
  if (L.NEAR_DEADLINE.test(t) || L.SECURITY.test(t) || L.OUTAGE.test(t)) return true
  const money = L.MONEY_LEGAL.test(t)
  let score = 0
  if (defect) score += 1
  if (money) score += 2
  if (L.BREADTH.test(t) && (defect || money)) score += 2
  if (L.ONGOING.test(t)) score += 2
  if (L.EMERGENCY_ACTION.test(t)) score += 2
  if (L.PROGRESSIVE.test(t)) score += 1
  if (L.FAR_TIME.test(t)) score -= 2
  if (L.NARROW.test(t)) score -= 1
  return score >= 3
}

/** "Not urgent: …", "P1 - …": a priority tag says when, and that it is a task, not what. */
const PRIORITY_TAG = /^(not urgent|low priority|high priority|no rush|urgent|asap|critical|emergency|p[0-3]|sev[- ]?[0-3])\s*(:|\s-)\s*/i

/** Classify one inbox item. A memo is never urgent. */
export function classifyTask(input: ClassifyInput): Classification {
  const label = normalize(input.label ?? '')
  // The gist of a description is in its first lines; a cap keeps long pastes fast.
  const desc = normalize((input.description ?? '').slice(0, 1000))
  // "Not urgent: rename X" - the urgency prefix is about timing, not about the kind.
  const body = label.replace(PRIORITY_TAG, '')
  const { kind, defect } = decideKind(body || label, desc, body !== label)
  const urgent = kind === 'do-it' && decideUrgent(desc ? `${label}. ${desc}` : label, defect)
  return { kind, urgent }
}
