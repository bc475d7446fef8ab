/** The markdown table of `npm run bench` (bench/run.ts): one row per figure and database. */

interface Fig {
  rps: number
  p50: number
  p99: number
  floorRps?: number
  ratio?: number
  bytes?: number
}

/** The part of bench/import50k.ts's JSON the table shows. */
export interface Import50k {
  importS: number
  keyword: Record<'during' | 'after' | 'embedding', { p50: number; p99: number }>
  fullS: number
  rssMb: { embedded: number; searched: number; rested: number }
  serverOnlyRssMb: { embedded: number; searched: number; rested: number }
}

export interface Row {
  database: 'pglite' | 'postgres'
  figures: Record<string, Fig>
  newQuery?: { mode: string; nodes: number; p50: number; p99: number }
  /** p50 ms of /healthz and of a write, one at a time, with `count` canvas long polls held and with none */
  polls?: { count: number; idle: { healthz: number; write: number }; held: { healthz: number; write: number } }
  rssMb: { start: number; afterSetup: number; afterReads: number }
  import50k?: Import50k
  /** bench/eval-search.ts against the bench's server: the dev set's hybrid (default) figures */
  evalSearch?: EvalSearch
}

/** What bench/eval-search.ts --json writes, as far as the table reads it. */
export interface EvalSearch {
  embedder: string
  modes: Record<string, Record<string, { n: number; recall5: number; mrr10: number; ndcg10: number }>>
}

const k = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)}k` : `${Math.round(x)}`)
const f1 = (x: number) => x.toFixed(1)
const f2 = (x: number) => x.toFixed(2)
const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`

/** Issue 26's goals: the least ratio of each read (PGlite, PostgreSQL). */
const READS: { name: string; figure: string; floor: (f: Fig) => string; goal?: [number, number] }[] = [
  { name: 'healthz', figure: '`GET /healthz` ÷ bare Bun hello (same bytes)', floor: () => 'bare Bun', goal: [0.8, 0.8] },
  {
    // no goal of the issue: how near a server that must read and log its request can come (bench/lib/floor-server.ts)
    name: 'healthzRequired',
    figure: '`GET /healthz` ÷ bare Bun that reads X-Request-Id, asks the client address and logs a line',
    floor: () => 'bare Bun, required work',
  },
  { name: 'projects', figure: 'authenticated `GET /api/v1/projects` ÷ `/healthz`', floor: () => '`/healthz`', goal: [0.85, 0.85] },
  {
    name: 'nodes',
    figure: '`GET /api/v1/nodes`, 1,000 nodes ÷ its bytes from bare Bun',
    floor: (f) => `bare Bun, ${kb(f.bytes!)}`,
    goal: [0.5, 0.35],
  },
  {
    name: 'treeDown',
    figure: '`GET /api/v1/tree` down, goal of 25 nodes ÷ its bytes',
    floor: (f) => `bare Bun, ${kb(f.bytes!)}`,
    goal: [0.5, 0.35],
  },
  {
    // no goal of the issue: the same bytes from a bare server that reads and logs its request
    name: 'treeDownRequired',
    figure: '`GET /api/v1/tree` down ÷ its bytes from bare Bun doing the required work',
    floor: (f) => `bare Bun, required work, ${kb(f.bytes!)}`,
  },
  {
    name: 'treeContext',
    figure: '`GET /api/v1/tree` context, same goal ÷ its bytes',
    floor: (f) => `bare Bun, ${kb(f.bytes!)}`,
    goal: [0.5, 0.35],
  },
  {
    name: 'search',
    figure: '`GET /api/v1/search`, one repeated query (1,000 nodes) ÷ `/healthz`',
    floor: () => '`/healthz`',
    goal: [0.5, 0.5],
  },
]

export function table(results: Row[], run: { commit: string; rounds: number; seconds: number; importNodes: number }): string {
  const db = (r: Row) => (r.database === 'pglite' ? 'PGlite' : 'PostgreSQL')
  const lines: string[] = []
  for (const read of READS)
    for (const r of results) {
      const f = r.figures[read.name]
      if (!f || f.ratio === undefined) continue
      const goal = read.goal?.[r.database === 'pglite' ? 0 : 1]
      const met = goal === undefined ? '— | —' : `≥ ${goal}× | ${f.ratio >= goal ? 'yes' : '**no**'}`
      lines.push(
        `| ${read.figure} | ${db(r)} | ${k(f.rps)} req/s (p99 ${f1(f.p99)} ms) | ${k(f.floorRps!)} req/s (${read.floor(f)}) | ${f.ratio.toFixed(3)}× | ${met} |`,
      )
    }
  for (const r of results)
    if (r.newQuery)
      lines.push(
        `| new search query p50 (p99), ${r.newQuery.nodes.toLocaleString('en')} nodes, ${r.newQuery.mode} | ${db(r)} | ${f1(r.newQuery.p50)} ms (${f1(r.newQuery.p99)} ms) | — | — | ≤ 10 ms | ${r.newQuery.p50 <= 10 ? 'yes' : '**no**'} |`,
      )
  for (const r of results) {
    const h = r.evalSearch?.modes['hybrid (default)']
    if (!h?.paraphrase || !h.all) continue
    const met = h.paraphrase.recall5 >= 0.85 && h.all.recall5 >= 0.9
    lines.push(
      `| dev-set search (\`npm run eval:search\`, hybrid, ${r.evalSearch!.embedder}): paraphrase R@5 / all R@5; all MRR@10 / nDCG@10 | ${db(r)} | ${f2(h.paraphrase.recall5)} / ${f2(h.all.recall5)}; ${f2(h.all.mrr10)} / ${f2(h.all.ndcg10)} | — | — | ≥ 0.85 / ≥ 0.90 | ${met ? 'yes' : '**no**'} |`,
    )
  }
  for (const r of results) {
    const p = r.polls
    if (!p) continue
    lines.push(
      `| \`/healthz\` p50, one at a time, ${p.count} canvas long polls held ÷ none | ${db(r)} | ${f2(p.held.healthz)} ms | ${f2(p.idle.healthz)} ms | ${(p.held.healthz / p.idle.healthz).toFixed(2)}× | ≤ 10 ms | ${p.held.healthz <= 10 ? 'yes' : '**no**'} |`,
      `| write p50, one at a time, ${p.count} canvas long polls held ÷ none | ${db(r)} | ${f2(p.held.write)} ms | ${f2(p.idle.write)} ms | ${(p.held.write / p.idle.write).toFixed(2)}× | ≤ 1.5× | ${p.held.write / p.idle.write <= 1.5 ? 'yes' : '**no**'} |`,
    )
  }
  for (const r of results) {
    const { write0, write10 } = r.figures
    if (write0 && write10)
      lines.push(
        `| write p50, 10 webhooks delivering ÷ none | ${db(r)} | ${write10.p50.toFixed(2)} ms | ${write0.p50.toFixed(2)} ms | ${(write10.p50 / write0.p50).toFixed(2)}× | — | — |`,
      )
    else if (write0) lines.push(`| write p50, no webhook | ${db(r)} | ${write0.p50.toFixed(2)} ms | — | — | — | — |`)
  }
  for (const r of results)
    lines.push(
      `| RSS, server with its model process: idle after start / after setup / after the reads | ${db(r)} | ${Math.round(r.rssMb.start)} / ${Math.round(r.rssMb.afterSetup)} / ${Math.round(r.rssMb.afterReads)} MB | — | — | ≤ 650 MB at 50,000 nodes (import row) | — |`,
    )
  for (const r of results) {
    const i = r.import50k
    if (!i) continue
    const kw = (x: { p50: number; p99: number }) => `p50 ${f1(x.p50)} / p99 ${f1(x.p99)} ms`
    lines.push(
      `| ${run.importNodes.toLocaleString('en')}-node import: keyword search during / after; all embedded; RSS embedded / searched / rested (server alone) | ${db(r)} | ${i.importS.toFixed(1)} s, ${kw(i.keyword.during)} / ${kw(i.keyword.after)}; ${i.fullS.toFixed(0)} s; ${Math.round(i.rssMb.embedded)} / ${Math.round(i.rssMb.searched)} / ${Math.round(i.rssMb.rested)} MB (${Math.round(i.serverOnlyRssMb.embedded)} / ${Math.round(i.serverOnlyRssMb.searched)} / ${Math.round(i.serverOnlyRssMb.rested)}) | — | — | ≤ 650 MB | ${i.rssMb.embedded <= 650 ? 'yes' : '**no**'} |`,
    )
  }
  return [
    `wrk in its own process; reads -t2 -c32, writes -t1 -c1; ${run.rounds} rounds × ${run.seconds} s per side, real and floor back to back in random order, ratio = median of the rounds' ratios; commit ${run.commit}`,
    '',
    '| figure | database | real | floor | ratio | goal | met? |',
    '|---|---|---|---|---|---|---|',
    ...lines,
  ].join('\n')
}
