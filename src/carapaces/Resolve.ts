/**
 * Include resolution, pure: follows includes depth first, each carapace once, and fails on the
 * first cycle it meets, naming it. Tools and skills come out in the order they are first reached
 * (a carapace's own before those of its includes), without repeats.
 */
import { Either } from "effect"
import { CarapaceCycle } from "./Model.ts"

export interface CarapaceNode {
  readonly id: string
  readonly tools: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  readonly includes: ReadonlyArray<string>
}

export interface Resolution {
  readonly carapaces: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
}

export const resolveIncludes = (
  graph: ReadonlyMap<string, CarapaceNode>,
  roots: ReadonlyArray<string>
): Either.Either<Resolution, CarapaceCycle> => {
  const done = new Set<string>()
  const carapaces: Array<string> = []
  const tools = new Set<string>()
  const skills = new Set<string>()
  const missing = new Set<string>()
  const stack: Array<string> = []

  const visit = (id: string): CarapaceCycle | undefined => {
    const at = stack.indexOf(id)
    if (at >= 0) return new CarapaceCycle({ cycle: [...stack.slice(at), id] })
    if (done.has(id) || missing.has(id)) return undefined
    const node = graph.get(id)
    if (!node) {
      missing.add(id)
      return undefined
    }
    carapaces.push(id)
    node.tools.forEach((tool) => tools.add(tool))
    node.skills.forEach((skill) => skills.add(skill))
    stack.push(id)
    for (const include of node.includes) {
      const cycle = visit(include)
      if (cycle) return cycle
    }
    stack.pop()
    done.add(id)
    return undefined
  }

  for (const root of roots) {
    const cycle = visit(root)
    if (cycle) return Either.left(cycle)
  }
  return Either.right({ carapaces, tools: [...tools], skills: [...skills], missing: [...missing] })
}
