import { describe, expect, it } from 'bun:test'
import { batchCostUs, COST_US, revertCostUs } from '../src/mutate/cost-limit'

// The estimate of src/mutate/cost-limit.ts (issue 50, item 3): what each kind of entry and change
// costs (on a checked body: the row's `weigh` runs after the body's check, src/mutate/sequence.ts `runWrite`).
describe('the estimate of one write on PGlite', () => {
  it('counts each batch entry by its kind, and every id a blockedBy or serves names', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `approach-${i + 2}`)
    expect(batchCostUs([{ action: 'add', node: { type: 'goal', data: { label: 'G' } } }])).toBe(COST_US.add)
    expect(batchCostUs([{ action: 'update', nodeId: 'approach-1', data: { blockedBy: ids } }])).toBe(
      COST_US.update + 50 * COST_US.relationId,
    )
    expect(batchCostUs([{ action: 'add', node: { type: 'approach', data: { label: 'A', serves: ['need-1', 'need-2'] } } }])).toBe(
      COST_US.add + 2 * COST_US.relationId,
    )
    expect(
      batchCostUs([
        { action: 'delete', nodeId: 'goal-1' },
        { action: 'addIteration', iteration: { name: 'S1' } },
      ]),
    ).toBe(COST_US.delete + COST_US.addIteration)
    // 1,000 plain adds and 300 plain updates fit the default 150 ms; 449 updates × blockedBy 50 do not
    expect(batchCostUs(Array.from({ length: 1000 }, () => ({ action: 'add', node: { data: { label: 'x' } } })))).toBe(100_000)
    expect(batchCostUs(Array.from({ length: 300 }, () => ({ action: 'update', data: { label: 'x' } })))).toBe(150_000)
    expect(batchCostUs(Array.from({ length: 449 }, () => ({ action: 'update', data: { blockedBy: ids } })))).toBe(1_347_000)
  })

  it('counts a revert by how each change is taken back', () => {
    const blockedBy = ['approach-2', 'approach-3']
    expect(
      revertCostUs([
        { target_kind: 'node', before: null, after: { parentId: null, data: {} }, fields: [] }, // an add: removed
        { target_kind: 'node', before: { parentId: null, data: { blockedBy } }, after: null, fields: [] }, // a delete: restored
        {
          target_kind: 'node',
          before: { parentId: null, data: { label: 'a', blockedBy } },
          after: { parentId: null, data: {} },
          fields: ['label'],
        },
        {
          target_kind: 'node',
          before: { parentId: null, data: { blockedBy } },
          after: { parentId: null, data: {} },
          fields: ['blockedBy'],
        },
        { target_kind: 'iteration', before: { name: 'S1' }, after: { name: 'S2' }, fields: ['name'] },
      ]),
    ).toBe(
      COST_US.revertAdd +
        COST_US.revertDelete +
        2 * COST_US.relationId +
        COST_US.revertUpdate +
        COST_US.revertUpdate +
        2 * COST_US.relationId +
        COST_US.revertUpdate,
    )
  })
})
