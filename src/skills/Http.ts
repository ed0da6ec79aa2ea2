import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { SkillLibrary } from "./Skills.ts"

export const SkillsHttpLive = HttpApiBuilder.group(CairnApi, "skills", (handlers) =>
  Effect.gen(function*() {
    const library = yield* SkillLibrary
    return handlers.handle("list", () =>
      Effect.sync(() => ({ skills: library.list().map(({ id, title, source }) => ({ id, title, source })) })))
  }))
