import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Budgets } from "./Budgets.ts"

export const BudgetsHttpLive = HttpApiBuilder.group(CairnApi, "budgets", (handlers) =>
  Effect.gen(function*() {
    const budgets = yield* Budgets
    return handlers
      .handle("list", () => budgets.list)
      .handle("get", ({ path }) => budgets.get(path.id))
      .handle("create", ({ payload }) => budgets.create(payload))
      .handle("update", ({ path, payload }) => budgets.update(path.id, payload))
      .handle("delete", ({ path }) => budgets.remove(path.id))
  }))
