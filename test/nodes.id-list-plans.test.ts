import { afterAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { approachWithJobs, sqlLiteral, startApp } from './helpers'

// Statements that look a list of ids up (`$2::text[]`) are prepared (PGlite's runner, postgres.js)
// and, after five runs, may keep a generic plan, made without the ids or the project. As
// `id = any($2)` and a join on the parent, sql/nodes/with-ancestors.sql and
// sql/search/ancestors-many.sql read every node of the project in their generic plan (nodes_order
// on a table no analyze had seen, a sequential scan once analyzed): a few nodes' ancestors cost
// what the project holds (bench/id-list-plans.ts). Found by lateral probes of the primary key
// instead, as sql/nodes/subtree.sql finds its roots, their generic plans read nothing else.
const app = await startApp()
afterAll(() => app.close())

const sql = (file: string) => readFileSync(join(import.meta.dir, '..', 'sql', file), 'utf8').replace(/^--.*$/gm, '')
/** the statement's generic plan and what it returns under it (and then `after`'s rows, a query in the same transaction; a write rolled back) */
let runs = 0
const rolledBack = new Error('rolled back')
const generic = async (text: string, params: unknown[], write?: { after: string }) => {
  let out: { plan: string; rows: Record<string, unknown>[]; after: Record<string, unknown>[] } | undefined
  await app.db
    .tx(async (tx) => {
      await tx.exec(`prepare id_list as ${text}`)
      await tx.exec('set local plan_cache_mode = force_generic_plan')
      // a text of its own for each run: the runner keeps a prepared statement per text, with its columns
      const args = `${params.map(sqlLiteral).join(', ')}) -- ${++runs}`
      const plan = await tx.query<Record<string, string>>(`explain execute id_list(${args}`)
      const rows = await tx.query<Record<string, unknown>>(`execute id_list(${args}`)
      await tx.exec('deallocate id_list')
      const after = write ? await tx.query<Record<string, unknown>>(`${write.after} -- ${runs}`) : []
      out = { plan: plan.map((r) => Object.values(r)[0]).join('\n'), rows, after }
      if (write) throw rolledBack
    })
    .catch((e) => {
      if (e !== rolledBack) throw e
    })
  return out!
}

const keyOnly = (plan: string) => {
  expect(plan).toContain('nodes_pkey')
  expect(plan).not.toMatch(/Seq Scan on nodes|Bitmap Heap Scan on nodes|nodes_order|nodes_parent/)
}

describe('statements of a list of ids, their generic plans', () => {
  it('probe the primary key for the ids and their ancestors, before and after an analyze, and return the same rows', async () => {
    const p = await app.project()
    const { goal, need, approach, jobs } = await approachWithJobs(app, p, 400)
    const [j1, j2] = [jobs[7]!, jobs[300]!]

    for (const when of ['no analyze yet', 'analyzed']) {
      if (when === 'analyzed') await app.db.exec('analyze nodes')

      const up = await generic(sql('nodes/with-ancestors.sql'), [p, [j1, j2, j1]])
      keyOnly(up.plan)
      expect(up.rows.map((r) => r.id).sort()).toEqual([goal, need, approach, j1, j2].sort())
      const job = up.rows.find((r) => r.id === j1)!
      expect(job.parent_id).toBe(approach)
      expect(job.type).toBe('job')
      expect(typeof job.rev === 'string' || typeof job.rev === 'number').toBe(true)

      const many = await generic(sql('search/ancestors-many.sql'), [p, [need, j1, j1, goal]])
      keyOnly(many.plan)
      const got = many.rows.map((r) => [String(r.node_id), Number(r.depth), r.id, r.type, r.label] as const)
      // ordered by node, then depth (the node ids' order is the database's collation)
      for (let i = 1; i < got.length; i++)
        if (got[i]![0] === got[i - 1]![0]) expect(got[i]![1]).toBe(got[i - 1]![1] + 1)
        else expect(got.slice(0, i).some((g) => g[0] === got[i]![0])).toBe(false)
      expect(got.map((g) => g.join(' ')).sort()).toEqual(
        [
          [j1, 1, approach, 'approach', 'A'],
          [j1, 2, need, 'need', 'N'],
          [j1, 3, goal, 'goal', 'G'],
          [need, 1, goal, 'goal', 'G'],
        ]
          .map((g) => g.join(' '))
          .sort(),
      )
    }
  })
})

// The other statements of a list of ids (bench/writes.md "Twelfth pass: the other lists of ids"): as
// `project_id = $1 and id = any($2)` their generic plans read the project's rows and filtered on
// the ids whenever the project looked small to the planner (a table no analyze had seen on
// PostgreSQL, a database of many small projects on both), and with good statistics the plan cache
// planned them again on every run. Each id is now a lateral probe of the key, the array read
// through a sub-select: the generic plan probes the key in every case and the plan cache keeps it.
// sql/search/load-vectors.sql too ("Twelfth pass: the last lists of ids"): as `($3 is null or
// text_hash = any($3))` its generic plan read every vector of the project and filtered them;
// sql/share/count-goals.sql (`id in (select jsonb_array_elements_text($2))`) read the project's
// goals; sql/nodes/set-classified-many.sql, joined to jsonb_to_recordset, hashed its rows against
// a sequential scan of every project's nodes.
describe('statements of a list of ids, each id a probe of its key', () => {
  /** the key probed for each id, and no scan of the project (its rows read and filtered on the ids) */
  const probes = (plan: string, index: string) => {
    expect(plan).toContain(`using ${index}`)
    expect(plan).not.toMatch(/Seq Scan|Bitmap Heap Scan|Filter: .*= ANY|Index Cond: \(project_id = \$1\)\s*$/m)
  }
  /** after twelve runs of the prepared statement, the plan cache runs its generic plan (it does not plan each run again) */
  const keptGeneric = (text: string, params: unknown[]) =>
    app.db
      .tx(async (tx) => {
        await tx.exec(`prepare id_list_kept as ${text}`)
        for (let i = 0; i < 12; i++) await tx.exec(`execute id_list_kept(${params.map(sqlLiteral).join(', ')})`)
        const [c] = await tx.query<{ generic_plans: number }>(
          `select generic_plans from pg_prepared_statements where name = 'id_list_kept'`,
        )
        await tx.exec('deallocate id_list_kept')
        throw Object.assign(new Error('rollback'), { generic: Number(c!.generic_plans) })
      })
      .catch((e: Error & { generic?: number }) => {
        if (e.generic === undefined) throw e
        return e.generic
      })

  it('read the same rows, in the same order, before and after an analyze, beside thousands of small projects', async () => {
    const p = await app.project()
    const { goal, approach, jobs } = await approachWithJobs(app, p, 400)
    const [j1, j2] = [jobs[9]!, jobs[250]!]
    await app.db.exec(`insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds)
      select project_id, id, 'a', 'tok-' || id, now() + interval '1 hour', now(), 60 from nodes where project_id = ${sqlLiteral(p)} and type = 'job'`)
    // a stored vector for each of the project's nodes (sql/search/load-vectors.sql looks some up by their texts' hashes)
    await app.db.exec(`insert into search_vectors (project_id, embedder, text_hash, vector)
      select project_id, 'emb', 'h-' || id, '\\x00' from nodes where project_id = ${sqlLiteral(p)}`)
    const inOrder = async (text: string) => (await app.db.query<{ v: string }>(text)).map((r) => String(r.v))
    const nodeIds = await inOrder(
      `select id as v from nodes where project_id = ${sqlLiteral(p)} and id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}) order by id`,
    )
    const changeIds = (
      await inOrder(
        `select id as v from changes where project_id = ${sqlLiteral(p)} and target_id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}) order by id`,
      )
    ).map(Number)
    expect(changeIds.length).toBeGreaterThanOrEqual(2)

    // each statement checked on its own, so that a failure names every statement that fails
    const failures: string[] = []
    const each = async (state: string, file: string, run: () => Promise<void>) => {
      try {
        await run()
      } catch (e) {
        failures.push(`${file} (${state}): ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`)
      }
    }
    const kept = async (file: string, params: unknown[]) => expect((await keptGeneric(sql(file), params)) > 0).toBe(true)
    const check = async (state: string) => {
      await each(state, 'nodes/get-many', async () => {
        const get = await generic(sql('nodes/get-many.sql'), [p, [j1, j2, j1, 'none']])
        probes(get.plan, 'nodes_pkey')
        expect(get.rows.map((r) => r.id).sort()).toEqual([j1, j2].sort())
        expect(get.rows.find((r) => r.id === j1)!.parent_id).toBe(approach)
        await kept('nodes/get-many.sql', [p, [j1, j2]])
      })
      await each(state, 'nodes/lock-many', async () => {
        const lock = await generic(sql('nodes/lock-many.sql'), [p, [j2, j1, 'none']])
        probes(lock.plan, 'nodes_pkey')
        expect(lock.plan).toContain('LockRows')
        expect(lock.rows.map((r) => r.id)).toEqual(nodeIds)
        expect(lock.rows[0]!.field_revs).toBeDefined()
        await kept('nodes/lock-many.sql', [p, [j1, j2]])
      })
      await each(state, 'history/get-many', async () => {
        const byId = await generic(sql('history/get-many.sql'), [p, [...changeIds, changeIds[0]!]])
        probes(byId.plan, 'changes_pkey')
        expect(byId.rows.map((r) => Number(r.id))).toEqual([...changeIds].reverse())
        await kept('history/get-many.sql', [p, changeIds])
      })
      await each(state, 'history/later', async () => {
        const later = await generic(sql('history/later.sql'), [p, [j2, j1], changeIds[0]!])
        probes(later.plan, 'changes_target')
        // each target's changes after $3 only: `id > $3` bounds the probe of changes_target (a
        // target's whole history read and filtered after it before, "Thirteenth pass: history/later")
        expect(later.plan).toMatch(/using changes_target on changes r[^\n]*\n\s*Index Cond: [^\n]*\(id > \$3\)/)
        expect(later.plan).not.toContain('Filter')
        expect(later.rows.map((r) => Number(r.id))).toEqual(changeIds.slice(1))
        await kept('history/later.sql', [p, [j1, j2], changeIds[0]!])
      })
      await each(state, 'history/latest-of-targets', async () => {
        const latest = await generic(sql('history/latest-of-targets.sql'), [p, [j1, j2, 'none'], 1])
        probes(latest.plan, 'changes_target')
        expect(latest.rows.map((r) => Number(r.id))).toEqual([changeIds.at(-1)!])
        await kept('history/latest-of-targets.sql', [p, [j1, j2], 1])
      })
      await each(state, 'claims/lock-nodes', async () => {
        const claims = await generic(sql('claims/lock-nodes.sql'), [p, [j2, j1, approach]])
        probes(claims.plan, 'claims_pkey')
        expect(claims.plan).toContain('LockRows')
        expect(claims.rows.map((r) => r.node_id)).toEqual(nodeIds)
        await kept('claims/lock-nodes.sql', [p, [j1, j2]])
      })
      await each(state, 'work/states', async () => {
        const states = await generic(sql('work/states.sql'), [p, [j1, j2, approach]])
        probes(states.plan, 'work_items_pkey')
        expect(states.rows.map((r) => r.node_id).sort()).toEqual([j1, j2].sort())
        expect(states.rows.every((r) => r.open === true && r.blocked === false)).toBe(true)
        await kept('work/states.sql', [p, [j1, j2]])
      })
      await each(state, 'search/load-vectors', async () => {
        const vectors = await generic(sql('search/load-vectors.sql'), [p, 'emb', [`h-${j1}`, `h-${j2}`, `h-${j1}`, 'h-none']])
        probes(vectors.plan, 'search_vectors_pkey')
        expect(vectors.rows.map((r) => r.text_hash).sort()).toEqual([`h-${j1}`, `h-${j2}`].sort())
        await kept('search/load-vectors.sql', [p, 'emb', [`h-${j1}`, `h-${j2}`]])
      })
      await each(state, 'share/count-goals', async () => {
        const goals = await generic(sql('share/count-goals.sql'), [p, JSON.stringify([goal, j1, goal, 'none'])])
        probes(goals.plan, 'nodes_pkey')
        expect(goals.rows).toEqual([{ count: 1 }])
        await kept('share/count-goals.sql', [p, JSON.stringify([goal, j1])])
      })
      await each(state, 'nodes/set-classified-many', async () => {
        const rows = [j1, j2].map((id) => ({ project_id: p, id, data: { label: `classified ${id}` } }))
        const saved = await generic(sql('nodes/set-classified-many.sql'), [JSON.stringify(rows)], {
          after: `select id, data ->> 'label' as label from nodes where project_id = ${sqlLiteral(p)} and id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}, ${sqlLiteral(approach)}) order by id`,
        })
        probes(saved.plan, 'nodes_pkey')
        expect(saved.rows.map((r) => r.id).sort()).toEqual([j1, j2].sort())
        expect(saved.after.map((r) => [r.id, r.label])).toEqual(
          [j1, j2, approach].sort().map((id) => [id, id === approach ? 'A' : `classified ${id}`]),
        )
      })
      // the recursive ones probed their keys already (the statements above); the plan cache now keeps their generic plans too
      await each(state, 'nodes/subtree', () => kept('nodes/subtree.sql', [p, [approach, j1]]))
      await each(state, 'nodes/with-ancestors', () => kept('nodes/with-ancestors.sql', [p, [j1, j2]]))
      await each(state, 'search/ancestors-many', () => kept('search/ancestors-many.sql', [p, [j1, j2]]))
      await each(state, 'nodes/delete-many', async () => {
        const gone = await generic(sql('nodes/delete-many.sql'), [p, [j1, j2, j1, 'none'], null, null], {
          after: `select id from nodes where project_id = ${sqlLiteral(p)} and id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}, ${sqlLiteral(approach)})`,
        })
        probes(gone.plan, 'nodes_pkey')
        expect(gone.rows.map((r) => r.id).sort()).toEqual([j1, j2].sort())
        expect(gone.after.map((r) => r.id)).toEqual([approach])
        await kept('nodes/delete-many.sql', [p, [j1, j2], null, null])
      })
      // the same statement with the node deleted by name logged to the changelog
      await each(state, 'nodes/delete-logged', async () => {
        const gone = await generic(sql('nodes/delete-many.sql'), [p, [j2, j1], j1, '{}'], {
          after: `select id from nodes where project_id = ${sqlLiteral(p)} and id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}, ${sqlLiteral(approach)})`,
        })
        probes(gone.plan, 'nodes_pkey')
        expect(gone.rows.filter((r) => r.changelog_id !== null)).toHaveLength(1)
        expect(gone.rows.flatMap((r) => (r.id === null ? [] : [r.id])).sort()).toEqual([j1, j2].sort())
        expect(gone.after.map((r) => r.id)).toEqual([approach])
        await kept('nodes/delete-many.sql', [p, [j1, j2], j1, '{}'])
      })
      await each(state, 'claims/end-nodes', async () => {
        const ended = await generic(sql('claims/end-nodes.sql'), [p, [j1, j2, approach], new Date().toISOString()], {
          after: `select node_id from claims where project_id = ${sqlLiteral(p)} and node_id in (${sqlLiteral(j1)}, ${sqlLiteral(j2)}, ${sqlLiteral(jobs[0]!)})`,
        })
        probes(ended.plan, 'claims_pkey')
        expect(ended.rows.map((r) => r.node_id).sort()).toEqual([j1, j2].sort())
        expect(ended.after.map((r) => r.node_id)).toEqual([jobs[0]!])
        await kept('claims/end-nodes.sql', [p, [j1, j2], new Date().toISOString()])
      })
      await each(state, 'claims/extend-tokens', async () => {
        const tokens = [`tok-${j1}`, `tok-${j2}`, 'tok-none']
        const extended = await generic(sql('claims/extend-tokens.sql'), [p, tokens, new Date().toISOString()], { after: 'select 1 as one' })
        probes(extended.plan, 'claims_token')
        expect(extended.rows.map((r) => r.node_id).sort()).toEqual([j1, j2].sort())
        await kept('claims/extend-tokens.sql', [p, tokens, new Date().toISOString()])
      })
    }

    await check('no analyze yet')
    // thousands of small projects, analyzed: a project now looks like a few rows to a generic plan
    for (const t of ['nodes', 'changes', 'claims', 'work_items']) await app.db.exec(`alter table ${t} disable trigger all`)
    await app.db.exec(
      `insert into projects (id, name, owner_id) select 'small' || i, 'small', (select owner_id from projects where id = ${sqlLiteral(p)}) from generate_series(1, 1500) i`,
    )
    await app.db.exec(`insert into nodes (project_id, id, type, parent_id, data)
      select 'small' || (i / 3 + 1), 'n' || (i % 3), 'job', null, '{}' from generate_series(0, 4499) i`)
    await app.db.exec(`insert into changes (project_id, via, request_id, action, target_kind, target_id, fields)
      select 'small' || (i / 3 + 1), 'api', 'r', 'add', 'node', 'n' || (i % 3), '[]' from generate_series(0, 4499) i`)
    await app.db.exec(`insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds)
      select 'small' || (i / 3 + 1), 'n' || (i % 3), 'a', 'small-' || i, now(), now(), 60 from generate_series(0, 4499) i`)
    await app.db.exec(`insert into work_items (project_id, node_id, type, open, blocked, urgent, iter_rank, focus, created_at, ord, touched_tx, blocked_before)
      select 'small' || (i / 3 + 1), 'n' || (i % 3), 'job', true, false, 1, 0, 1, now(), i, 0, false from generate_series(0, 4499) i`)
    await app.db.exec(`insert into search_vectors (project_id, embedder, text_hash, vector)
      select 'small' || (i / 3 + 1), 'emb', 'h-n' || (i % 3), '\\x00' from generate_series(0, 4499) i`)
    for (const t of ['nodes', 'changes', 'claims', 'work_items']) await app.db.exec(`alter table ${t} enable trigger all`)
    await app.db.exec('analyze')
    await check('beside 1,500 small projects, analyzed')
    expect(failures).toEqual([])
  })
})

describe('a delete of a list of ids, beside a concurrent update', () => {
  // PostgreSQL only: PGlite runs one transaction at a time
  it.skipIf(!process.env.TEST_DATABASE_URL)('deletes the row another transaction updated meanwhile, once that one commits', async () => {
    const p = await app.project()
    const { approach, jobs } = await approachWithJobs(app, p, 3)
    const [j1, j2] = [jobs[0]!, jobs[1]!]
    const updated = Promise.withResolvers<void>()
    const release = Promise.withResolvers<void>()
    const update = app.db.tx(async (tx) => {
      await tx.exec(
        `update nodes set data = data || '{"label": "moved on"}' where project_id = ${sqlLiteral(p)} and id = ${sqlLiteral(j1)}`,
      )
      updated.resolve()
      await release.promise
    })
    await updated.promise
    let deleted: string[] = []
    const remove = app.db
      .tx(async (tx) => {
        await tx.exec('set local plan_cache_mode = force_generic_plan')
        deleted = (await tx.query<{ id: string }>(sql('nodes/delete-many.sql'), [p, [j1, j2], null, null])).map((r) => r.id)
        throw rolledBack
      })
      .catch((e) => {
        if (e !== rolledBack) throw e
      })
    // the delete waits for the update's row lock
    const deadline = Date.now() + 30_000
    while (
      (
        await app.db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        )
      )[0]!.n === 0
    ) {
      if (Date.now() > deadline) throw new Error('the delete never waited for the update')
      await Bun.sleep(20)
    }
    release.resolve()
    await Promise.all([update, remove])
    expect(deleted.sort()).toEqual([j1, j2].sort())
    // rolled back: the nodes are still there, the update kept
    const left = await app.db.query<{ id: string; label: string }>(
      `select id, data ->> 'label' as label from nodes where project_id = ${sqlLiteral(p)} and parent_id = ${sqlLiteral(approach)} order by id`,
    )
    expect(left.find((r) => r.id === j1)?.label).toBe('moved on')
    expect(left).toHaveLength(3)
  })
})
