import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Usage } from "./Usage.ts"

export const UsageHttpLive = HttpApiBuilder.group(CairnApi, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    return handlers.handle("report", ({ urlParams }) =>
      urlParams.from && urlParams.to && urlParams.from.getTime() >= urlParams.to.getTime()
        ? Effect.fail(ValidationError.single(["query", "from"], "Expected `from` to be before `to`"))
        : usage.report(urlParams))
  }))
