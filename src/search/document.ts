// What of a planning-tree node gets indexed, in one place, so the server and
// the benchmark index nodes the same way.

import type { KeywordDoc } from "./bm25.ts";

export interface NodeData {
  label?: string | null;
  description?: string | null;
  notes?: string | null;
  measure?: string | null;
}

/** Fields for the keyword index (weights per field live in bm25.ts). */
export function keywordDoc(id: string, data: NodeData): KeywordDoc {
  return {
    id,
    fields: { label: data.label, description: data.description, notes: data.notes, measure: data.measure },
  };
}

/**
 * Texts to embed for a node; the node's semantic score is its best cosine
 * over them. The label alone matches short queries that name the thing; the
 * label with its description matches queries that paraphrase the detail.
 * Notes and measure are left to the keyword index: on the dev set adding them
 * to the vectors diluted the paraphrase matches more than it helped.
 */
export function embeddingTexts(data: NodeData): string[] {
  const label = (data.label ?? "").trim();
  const description = (data.description ?? "").trim();
  if (!description) return [label];
  if (!label) return [description];
  return [label, `${label}. ${description}`];
}
