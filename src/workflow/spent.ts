import { createHash } from 'node:crypto'
import type { Db } from '../db'
import { RefusalError } from '../errors'
import { deleteExpiredSpent, isSpent, spendState } from './queries'

/**
 * A state whose terminal step applied is spent: it cannot apply a second changeset, whatever
 * response comes with it. The very same advance again is answered from its stored outcome
 * (refuseRepeat, with the earlier changeset); a different response to the spent state gets
 * this error. Of the terminal-apply bodies of docs/reference/workflow.md it is the one that fits: an earlier
 * attempt of this advance (this state's terminal step) already landed, nothing was written
 * now, and retrying cannot help (retry:false).
 */
export class StateSpent extends RefusalError {
  constructor() {
    super(500, 'This workflow state was already applied by an earlier advance', {
      retry: false,
      partialApply: false,
      alreadyApplied: true,
      _meta: {
        _tip: 'A state whose last step applied is spent; nothing was written now. Read GET /api/v1/nodes for what the earlier advance applied, and start the flow again for more changes.',
      },
    })
  }
}

const digestOf = (state: string) => createHash('sha256').update(state).digest('hex')

/** Before any work: a spent state is refused at once (the apply's conditional insert decides races). */
export async function refuseSpent(db: Db, state: string): Promise<void> {
  if (await isSpent(db, digestOf(state))) throw new StateSpent()
}

/**
 * Inside the apply's transaction, before its batch: marks the state spent until it expires, or
 * throws StateSpent when another apply of it got there first (the transaction then rolls back).
 */
export async function spend(db: Db, state: string, expiresAt: number): Promise<void> {
  if (!(await spendState(db, digestOf(state), new Date(expiresAt)))) throw new StateSpent()
}

/** The clean-up loop's work: forget spent states once they expired anyway. */
export const forgetSpentStates = (db: Db, now: Date) => deleteExpiredSpent(db, now)
