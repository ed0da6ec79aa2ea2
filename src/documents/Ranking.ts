/**
 * Reciprocal-rank fusion (Cormack et al. 2009) of the vector and full-text result lists. Both lists
 * hold chunks, best first; a document takes the rank of its best chunk in each list, so it ranks
 * by its best passages rather than by its length.
 */

export interface ChunkHit {
  readonly documentId: string
  readonly ordinal: number
  readonly content: string
}

export interface VectorHit extends ChunkHit {
  readonly similarity: number
}

export interface FusedDocument {
  readonly documentId: string
  readonly score: number
  /** Cosine similarity of the best chunk, when the document came up in the vector list. */
  readonly similarity: number | null
  /** The best chunk: the vector list's when present, else the full-text list's. */
  readonly snippet: string
}

/** The usual constant: dampens the weight of the very first ranks so neither list dominates. */
export const RRF_K = 60

/** The first (best) hit of each document, in order. */
const bestPerDocument = <H extends ChunkHit>(hits: ReadonlyArray<H>): Array<H> => {
  const seen = new Set<string>()
  const out: Array<H> = []
  for (const hit of hits) {
    if (seen.has(hit.documentId)) continue
    seen.add(hit.documentId)
    out.push(hit)
  }
  return out
}

export const fuse = (
  vector: ReadonlyArray<VectorHit>,
  text: ReadonlyArray<ChunkHit>,
  limit: number,
  k = RRF_K
): Array<FusedDocument> => {
  const fused = new Map<string, { score: number; similarity: number | null; snippet: string }>()
  bestPerDocument(vector).forEach((hit, rank) => {
    fused.set(hit.documentId, { score: 1 / (k + rank + 1), similarity: hit.similarity, snippet: hit.content })
  })
  bestPerDocument(text).forEach((hit, rank) => {
    const entry = fused.get(hit.documentId)
    if (entry) entry.score += 1 / (k + rank + 1)
    else fused.set(hit.documentId, { score: 1 / (k + rank + 1), similarity: null, snippet: hit.content })
  })
  return [...fused.entries()]
    .map(([documentId, entry]) => ({ documentId, ...entry }))
    .sort((a, b) => b.score - a.score || (b.similarity ?? -2) - (a.similarity ?? -2))
    .slice(0, limit)
}
