import { expect } from 'bun:test'
import type { Res } from './helpers'

/**
 * The GET /search answer shape both backends must give for the query "SEPA Direct Debit" on the
 * small payments tree of their tests: the SEPA job first as {node, similarity, ancestors}, its
 * ancestors from the parent up to the root goal, every similarity in [0, 1], best first.
 */
export function expectSepaJobFirst(res: Res, ids: { job: string; approach: string; need: string; goal: string }) {
  expect(res.status).toBe(200)
  expect(res.body.results[0]).toEqual({
    node: {
      id: ids.job,
      rev: expect.any(String),
      type: 'job',
      parentId: ids.approach,
      data: { label: 'Payers in the eurozone can pay by SEPA Direct Debit', iteration: 'Later' },
    },
    similarity: expect.any(Number),
    ancestors: [
      { id: ids.approach, type: 'approach', label: 'Hosted pay-by-link checkout' },
      { id: ids.need, type: 'need', label: 'Payers can settle invoices online' },
      { id: ids.goal, type: 'goal', label: 'Get paid faster' },
    ],
  })
  const sims = res.body.results.map((r: any) => r.similarity)
  for (const s of sims) expect(s >= 0 && s <= 1).toBe(true)
  expect([...sims].sort((a, b) => b - a)).toEqual(sims)
}
