/**
 * Unit tests for the offline task classifier (src/nodes/classify.ts), one per
 * labelling rule in shared/eval/README.md. The examples are invented here, for
 * other products than the dev set's, so the tests check the rules, not items.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { classifyTask } from '../src/nodes/classify'

const memo = { kind: 'memo', urgent: false } as const
const todo = { kind: 'do-it', urgent: false } as const
const urgent = { kind: 'do-it', urgent: true } as const
const c = (label: string, description?: string) => classifyTask({ label, description })

describe('memo: something to keep', () => {
  test("an 'Idea:' prefix is a memo, even when an order-like clause follows", () => {
    expect(c('Idea: a dark-mode toggle for the kitchen display')).toEqual(memo)
    expect(c('Idea for next season: let members pause their plan for a month')).toEqual(memo)
  })
  test('a data point or statistic is a memo', () => {
    expect(c('Data point: 18% of new venues never set opening hours')).toEqual(memo)
    expect(c('Weekday lunch bookings grew 9% after the menu photos launched')).toEqual(memo)
  })
  test('a quote with a speaker is a memo', () => {
    expect(c("Head chef at Rosa: 'I would pay extra for smarter waitlist texts.'")).toEqual(memo)
  })
  test("'Remember that…' is a memo", () => {
    expect(c('Remember that the Oslo office closes at 3pm on Fridays')).toEqual(memo)
  })
  test("'Never…', 'Always…' and \"Don't…\" rules are memos", () => {
    expect(c('Never deploy the mobile app during the Monday morning rush')).toEqual(memo)
    expect(c('Always copy the data-protection officer on breach reports')).toEqual(memo)
    expect(c("Don't promise offline mode to enterprise prospects")).toEqual(memo)
  })
  test('an observation is a memo', () => {
    expect(c('Most gym members log workouts on their phones, not on the web')).toEqual(memo)
  })
  test('meeting notes and retro takeaways are memos', () => {
    expect(c('Notes from the vendor demo: their API has no webhooks yet')).toEqual(memo)
    expect(c('Call with Brightwave - they want SSO before the summer')).toEqual(memo)
  })
  test('a decision taken is a memo', () => {
    expect(c('Decided at the planning review: the free plan stays at three projects')).toEqual(memo)
  })
  test('a hedged suggestion is a memo', () => {
    expect(c('Maybe we should offer yearly billing to schools')).toEqual(memo)
    expect(c('What if the receipt email showed a map of the venue?')).toEqual(memo)
  })
  test("'Not a bug' is a memo even when it names a symptom", () => {
    expect(c('Not a bug: the export shows 0.00 for draft orders on purpose')).toEqual(memo)
  })
  test('an explained past incident is a memo', () => {
    expect(c("Last month's checkout outage was caused by an expired key at the payment provider")).toEqual(memo)
  })
  test('habitual behaviour of a third party is a memo, not a defect', () => {
    expect(c("The carrier's sandbox resets every night, so integration tests fail at 2am")).toEqual(memo)
  })
})

describe('do-it: a concrete action with a done state', () => {
  test('an imperative verb at the start is a do-it', () => {
    expect(c('Send the renewal quote to Greenfield Schools')).toEqual(todo)
    expect(c('Figure out why Android sign-ups dropped in May')).toEqual(todo)
  })
  test('a word that is both noun and verb is a do-it only when used as a verb', () => {
    expect(c('Review the onboarding emails for tone')).toEqual(todo)
    expect(c('Support volume rose 8% after the redesign')).toEqual(memo)
  })
  test('a bug report with no verb is a do-it', () => {
    expect(c('Calendar export crashes when an event has no end time')).toEqual(todo)
    expect(c('Mobile login button misaligned on small screens')).toEqual(todo)
  })
  test('stale copy in our product is a defect, so a do-it', () => {
    expect(c('Help page still mentions the old two-seat limit')).toEqual(todo)
  })
  test('a defect spelled out only in the description is a do-it', () => {
    expect(c('Order totals round 19.995 to 19.99', 'Two shops noticed; totals should round half up.')).toEqual(todo)
  })
  test("'Remember to…' asks for an action", () => {
    expect(c('Remember to renew the trademark filing')).toEqual(todo)
  })
  test('a meeting still to hold is a do-it', () => {
    expect(c('Lunch with the Brightwave CFO when she is in Berlin next month')).toEqual(todo)
  })
  test('an obligation or a due date is a do-it', () => {
    expect(c('Need sign-off from legal on the new DPA')).toEqual(todo)
    expect(c('Board slides due next Monday')).toEqual(todo)
  })
  test('an attention prefix followed by an order is a do-it', () => {
    expect(c('Reminder: book the venue for the team offsite')).toEqual(todo)
  })
  test('a question that needs a decision is a do-it', () => {
    expect(c('Should we drop support for Android 9?')).toEqual(todo)
  })
  test('a deliverable addressed to someone is a do-it', () => {
    expect(c('Thank-you card to the beta testers')).toEqual(todo)
  })
  test('a priority tag marks a backlog item', () => {
    expect(c('Low priority: dark mode for the admin panel')).toEqual(todo)
  })
})

describe('urgent: a do-it that cannot wait past today', () => {
  test('a memo is never urgent', () => {
    expect(c('Lesson from the outage: page the on-call engineer within 5 minutes')).toEqual(memo)
    expect(c('Idea: a status banner that goes up automatically when checkout is down')).toEqual(memo)
  })
  test('an outage is urgent', () => {
    expect(c('Checkout API returns 503 for all EU shoppers')).toEqual(urgent)
    expect(c('Booking site down - nobody can reserve a table')).toEqual(urgent)
  })
  test('users locked out of their accounts is an outage, however it is spelled', () => {
    expect(c("Members can't log in to the app")).toEqual(urgent)
    expect(c('Critical bug: coaches cannot log in since the release')).toEqual(urgent)
    expect(c('Drivers unable to sign in on Android')).toEqual(urgent)
  })
  test('data exposure is urgent', () => {
    expect(c("Patients can see other patients' appointment notes")).toEqual(urgent)
    expect(c('API tokens printed in the public build logs')).toEqual(urgent)
  })
  test('money harm happening now is urgent', () => {
    expect(c('Members are being charged the monthly fee twice since this morning')).toEqual(urgent)
  })
  test('a hard deadline today or tomorrow is urgent', () => {
    expect(c('File the VAT return by tomorrow noon')).toEqual(urgent)
    expect(c('Renew the domain - it expires tonight')).toEqual(urgent)
  })
  test('a broad failure that started today is urgent without the word', () => {
    expect(c('All shipping labels rejected since the 9am carrier update')).toEqual(urgent)
  })
  test("'urgent' or 'emergency' inside a name is not urgent", () => {
    expect(c('Emergency-exit map on the venue page - redesign it next sprint')).toEqual(todo)
    expect(c('FYI the sales team tags almost every lead as urgent')).toEqual(memo)
  })
  test("'urgent' in a hypothetical is not urgent", () => {
    expect(c("Hypothetically, if the warehouse sync went down at peak we'd need an urgent fallback")).toEqual(memo)
  })
  test('taken-back urgency is not urgent', () => {
    expect(c("Not urgent: rename 'Clients' to 'Customers' in the sidebar")).toEqual(todo)
  })
  test('a critical-sounding task with a far horizon is not urgent', () => {
    expect(c('Critical: plan the database upgrade for next quarter')).toEqual(todo)
  })
  test('a narrow defect with no harm is not urgent', () => {
    expect(c('Avatar upload fails on Safari 15 when the file name has emoji')).toEqual(todo)
  })
  test('a deadline past tomorrow is not urgent', () => {
    expect(c('Reply to the Acme RFP by next Friday')).toEqual(todo)
  })
})

describe('contract', () => {
  test('is deterministic and tolerates empty or missing fields', () => {
    expect(c('')).toEqual(memo)
    expect(classifyTask({ label: 'Fix the footer links', description: null })).toEqual(todo)
    expect(c('Payment page returns 500 for everyone')).toEqual(c('Payment page returns 500 for everyone'))
  })
})

/** Kind accuracy and urgent F1 exactly as shared/eval/README.md defines them. */
function score(items: { label: string; description?: string | null; kind: string; urgent: boolean }[]) {
  let ok = 0,
    tp = 0,
    fp = 0,
    fn = 0
  for (const it of items) {
    const got = classifyTask(it)
    if (got.kind === it.kind) ok++
    const pred = got.kind === 'do-it' && got.urgent,
      gold = it.kind === 'do-it' && it.urgent
    if (pred && gold) tp++
    else if (pred) fp++
    else if (gold) fn++
  }
  const p = tp / (tp + fp || 1),
    r = tp / (tp + fn || 1)
  return { accuracy: ok / items.length, f1: p + r ? (2 * p * r) / (p + r) : 0 }
}

describe('sets', () => {
  test('held-out items from six other products meet the goals', () => {
    const held = JSON.parse(readFileSync(new URL('../bench/classify-heldout.json', import.meta.url), 'utf8'))
    const s = score(held.items)
    expect(s.accuracy).toBeGreaterThanOrEqual(0.9)
    expect(s.f1).toBeGreaterThanOrEqual(0.85)
  })
  // the dev set lives beside the checkout (../shared/eval), not in it: read it when it is there, say so when not
  const dev = new URL('../../shared/eval/classify-dev.json', import.meta.url)
  if (!existsSync(dev)) console.warn(`nodes.classify.test.ts: ${dev.pathname} is absent, so only the held-out set is scored`)
  test.skipIf(!existsSync(dev))('the dev set of ../shared/eval/classify-dev.json meets the goals (kind >= 0.85, urgent F1 >= 0.75)', () => {
    const s = score(JSON.parse(readFileSync(dev, 'utf8')).items)
    expect(s.accuracy).toBeGreaterThanOrEqual(0.85)
    expect(s.f1).toBeGreaterThanOrEqual(0.75)
  })
})
