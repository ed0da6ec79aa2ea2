import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { WorkspaceTemplateList } from "./Model.ts"
import { Workspaces } from "./Workspaces.ts"

export const WorkspacesHttpLive = HttpApiBuilder.group(CairnApi, "workspaces", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    return handlers
      .handle("list", ({ path }) => workspaces.list(path.id))
      .handle("read", ({ path }) => workspaces.read(path.id, path["*"]))
      .handle("write", ({ path, payload }) => workspaces.write(path.id, path["*"], payload.content, payload.encoding))
      .handle("delete", ({ path }) => workspaces.remove(path.id, path["*"]))
      .handle("readFile", ({ path, urlParams }) => workspaces.read(path.id, urlParams.path))
      .handle("writeFile", ({ path, urlParams, payload }) => workspaces.write(path.id, urlParams.path, payload.content, payload.encoding))
      .handle("deleteFile", ({ path, urlParams }) => workspaces.remove(path.id, urlParams.path))
      .handle("applyTemplate", ({ path, payload }) => workspaces.applyTemplate(path.id, payload.template_id, payload.overwrite))
      .handle("templates", () => Effect.map(workspaces.listTemplates, (templates) => new WorkspaceTemplateList({ templates })))
  }))
