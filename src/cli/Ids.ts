/**
 * Ids as a person gives them: whole, cut by a table (`3f2a9c…`), or a unique prefix (`3f2a`), as
 * gh and git take them. The candidates come from the list the command's API offers.
 */
import { Effect } from "effect"
import { fail } from "./Output.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The id as typed, without a table's cut mark; whether it is already whole (a full UUID). */
export const typedId = (given: string) => {
  const id = given.trim().replace(/…$/, "")
  return { id, whole: uuid.test(id) }
}

/** The one id of `candidates` that is `given` or starts with it; none or several is a failure naming them. */
export const resolveId = (kind: string, given: string, candidates: ReadonlyArray<string>) => {
  const { id } = typedId(given)
  if (candidates.includes(id)) return Effect.succeed(id)
  const matches = id.length === 0 ? [] : candidates.filter((candidate) => candidate.startsWith(id))
  if (matches.length === 1) return Effect.succeed(matches[0]!)
  if (matches.length === 0) return fail(`no ${kind} ${id === "" ? "given" : `has an id starting with ${id}`}`)
  const shown = matches.slice(0, 5).join(", ")
  return fail(`${id} starts ${matches.length} ${kind} ids (${shown}${matches.length > 5 ? ", …" : ""}); give more of it`)
}

/**
 * `given` as a whole id: as it is when it already is one, else resolved against the ids `list`
 * answers (asked only then).
 */
export const wholeId = <E, R>(kind: string, given: string, list: Effect.Effect<ReadonlyArray<string>, E, R>) => {
  const { id, whole } = typedId(given)
  return whole ? Effect.succeed(id) : Effect.flatMap(list, (candidates) => resolveId(kind, given, candidates))
}
