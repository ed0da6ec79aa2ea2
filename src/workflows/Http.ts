import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { ownerOf } from "../sessions/Access.ts"
import { Workflows } from "./Workflows.ts"

export const WorkflowsHttpLive = HttpApiBuilder.group(CairnApi, "workflows", (handlers) =>
  Effect.gen(function*() {
    const workflows = yield* Workflows
    return handlers
      .handle("list", () => workflows.list)
      .handle("get", ({ path }) => workflows.get(path.id))
      .handle("export", ({ path }) => workflows.exportYaml(path.id))
      .handle("create", ({ payload }) => workflows.create(payload))
      .handle("update", ({ path, payload }) => workflows.update(path.id, payload))
      .handle("delete", ({ path }) => workflows.remove(path.id))
      .handle("run", ({ path, payload }) =>
        Effect.flatMap(Principal, (principal) => workflows.start(path.id, payload.params, `api:${ownerOf(principal)}`)))
      .handle("runs", ({ urlParams }) =>
        workflows.runs({ workflowId: urlParams.workflow_id, status: urlParams.status, limit: urlParams.limit }))
      .handle("getRun", ({ path }) =>
        workflows.view(path.id))
      .handle("cancel", ({ path }) =>
        workflows.cancel(path.id))
      .handle("approve", ({ path }) =>
        workflows.approve(path.id, path.step))
      .handle("skip", ({ path }) => workflows.skip(path.id, path.step))
      .handle("retry", ({ path }) => workflows.retry(path.id, path.step))
  }))
