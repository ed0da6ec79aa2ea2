/**
 * The built-in tools, registered into the tool registry at startup. A bot gets only the tools it
 * lists (`tools`), by name or by group (`@files`, see Tools.ts); carapaces can add either.
 */
import { Effect, Layer } from "effect"
import { Documents } from "../../documents/Documents.ts"
import { Todos } from "../../todos/Todos.ts"
import { Workspaces } from "../../workspaces/Workspaces.ts"
import { layer as ToolRegistryLive, ToolRegistry } from "../Tools.ts"
import { fileTools } from "./Files.ts"
import { memoryTools } from "./Memory.ts"
import { todoTools } from "./Todos.ts"
import { webTools } from "./Web.ts"

export const BuiltinToolsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const tools = [...(yield* fileTools), ...(yield* memoryTools), ...(yield* todoTools), ...(yield* webTools)]
    yield* Effect.forEach(tools, registry.register, { discard: true })
  })
).pipe(Layer.provide(Layer.mergeAll(ToolRegistryLive, Workspaces.Default, Documents.Default, Todos.Default)))
