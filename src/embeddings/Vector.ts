/** Small vector helpers shared by the embedders and the document store. */

/** A unit-length copy (cosine similarity becomes a dot product); a zero vector stays zero. */
export const normalize = (values: ArrayLike<number>): Array<number> => {
  let sum = 0
  for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!
  const norm = Math.sqrt(sum)
  const out = new Array<number>(values.length)
  for (let i = 0; i < values.length; i++) out[i] = norm === 0 ? 0 : values[i]! / norm
  return out
}

export const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

/** PostgreSQL array literal (`{0.1,0.2}`), cast with `::real[]` in SQL. */
export const toPgArray = (values: ArrayLike<number>): string => `{${Array.from(values, format).join(",")}}`

/** pgvector literal (`[0.1,0.2]`), cast with `::vector(n)` in SQL. */
export const toPgVector = (values: ArrayLike<number>): string => `[${Array.from(values, format).join(",")}]`

// Seven significant digits is what a float4 holds; more only makes the statement longer.
const format = (value: number): string => (Number.isFinite(value) ? Number(value.toPrecision(7)).toString() : "0")

/** FNV-1a, 32 bits: a stable hash for seeding per-token vectors. */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * A deterministic pseudo-random unit vector for a token (xorshift32 seeded by its hash). Tokens
 * the model does not know still get a direction of their own, so two texts sharing a rare name or
 * code are closer than two that do not.
 */
export const hashedUnitVector = (token: string, dimension: number): Array<number> => {
  let state = fnv1a(token) || 0x9e3779b9
  const out = new Array<number>(dimension)
  for (let i = 0; i < dimension; i++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    out[i] = ((state >>> 0) / 0xffffffff) * 2 - 1
  }
  return normalize(out)
}
