// Retrieval metrics exactly as /work/shared/eval/README.md defines them.

export interface QueryMetrics {
  recall5: number
  mrr10: number
  ndcg5: number
  /** the same with the first 10 (the issue 57 reports it beside recall@5 and MRR) */
  ndcg10: number
}

export function scoreQuery(ranked: string[], relevant: ReadonlySet<string>): QueryMetrics {
  const top5 = ranked.slice(0, 5)
  const recall5 = top5.filter((id) => relevant.has(id)).length / relevant.size
  const first = ranked.slice(0, 10).findIndex((id) => relevant.has(id))
  const mrr10 = first < 0 ? 0 : 1 / (first + 1)
  return { recall5, mrr10, ndcg5: ndcg(ranked, relevant, 5), ndcg10: ndcg(ranked, relevant, 10) }
}

/** DCG@k / IDCG@k with binary gains. */
function ndcg(ranked: string[], relevant: ReadonlySet<string>, k: number): number {
  let dcg = 0
  ranked.slice(0, k).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2)
  })
  let idcg = 0
  for (let i = 0; i < Math.min(relevant.size, k); i++) idcg += 1 / Math.log2(i + 2)
  return idcg ? dcg / idcg : 0
}

/** Mean metrics per group (kind), plus "all". */
export function summarise(rows: { kind: string; m: QueryMetrics }[]): Map<string, QueryMetrics & { n: number }> {
  const groups = new Map<string, QueryMetrics[]>()
  for (const { kind, m } of rows) {
    for (const g of [kind, 'all']) {
      if (!groups.has(g)) groups.set(g, [])
      groups.get(g)!.push(m)
    }
  }
  const out = new Map<string, QueryMetrics & { n: number }>()
  for (const [g, ms] of groups) {
    const mean = (f: (m: QueryMetrics) => number) => ms.reduce((s, m) => s + f(m), 0) / ms.length
    out.set(g, {
      n: ms.length,
      recall5: mean((m) => m.recall5),
      mrr10: mean((m) => m.mrr10),
      ndcg5: mean((m) => m.ndcg5),
      ndcg10: mean((m) => m.ndcg10),
    })
  }
  return out
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * (sorted.length - 1))))
  return sorted[i]!
}
