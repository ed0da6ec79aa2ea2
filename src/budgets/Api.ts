/** `/api/v1/admin/budgets`: spend caps on LLM calls, with where each stands this period. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { BudgetNotFound } from "./Errors.ts"
import { Budget, BudgetStatus, CreateBudget, UpdateBudget } from "./Model.ts"

const budgetPath = idPath("Budget")

export class BudgetsApi extends HttpApiGroup.make("budgets")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/budgets")
      .addSuccess(Schema.Array(BudgetStatus))
      .annotate(RequiredScope, "usage:read")
      .annotate(OpenApi.Description, "Every budget with its current period's spent, reserved and left, oldest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/admin/budgets/:id")
      .setPath(budgetPath)
      .addSuccess(BudgetStatus)
      .annotate(RequiredScope, "usage:read")
      .annotate(OpenApi.Description, "One budget: its current period (in BUDGET_TIMEZONE), spent, reserved by calls in flight, and left")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/budgets")
      .setPayload(CreateBudget)
      .addSuccess(Budget, { status: 201 })
      .annotate(RequiredScope, "settings:write")
      .annotate(
        OpenApi.Description,
        "Add a budget: {scope: global|bot|key|user|channel|integration, target (the id; none for global), period: day|month|total, limit_usd?, limit_tokens? (at least one), action: block|warn (default block), warn_at (default 0.8)}. Every LLM call of the scope reserves its worst case (prompt plus max_tokens, priced) before it is made; past a block budget calls are refused with 429 until the period ends"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/admin/budgets/:id")
      .setPath(budgetPath)
      .setPayload(UpdateBudget)
      .addSuccess(Budget)
      .annotate(RequiredScope, "settings:write")
      .annotate(OpenApi.Description, "Change a budget: any of {period, limit_usd, limit_tokens, action, warn_at}; scope and target stay")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/admin/budgets/:id")
      .setPath(budgetPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(RequiredScope, "settings:write")
      .annotate(OpenApi.Description, "Delete a budget and its spend records")
  )
  .addError(detailBody(BudgetNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Budgets")
{}
