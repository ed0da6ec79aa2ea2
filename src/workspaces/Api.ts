import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath, queryParams } from "../contract/Params.ts"
import { WorkspaceConflict, WorkspaceFileNotFound } from "./Errors.ts"
import { AppliedTemplate, ApplyTemplate, WorkspaceFile, WorkspaceFileList, WorkspaceTemplateList, WriteFile, WrittenFile } from "./Model.ts"

const channelPath = idPath("Channel")
/** `*` is the rest of the URL path: the file's path inside the workspace (percent-decoded). */
const filePath = idPath("Channel", { "*": Schema.String })

/**
 * The same file operations with the file's path as a query parameter (`?path=notes/today.md`):
 * the typed client (Effect's HttpApiClient) fills `:name` path parameters only, so it cannot call
 * the `*` routes above; the web console and other typed-client callers use these.
 */
const fileQuery = queryParams({ path: Schema.String.pipe(Schema.minLength(1, { message: () => "path must not be empty" })) })

const disabled = "409 when the channel's workspace is not enabled."

export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/channels/:id/workspace/files")
      .setPath(channelPath)
      .addSuccess(WorkspaceFileList)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces.files:read")
      .annotate(OpenApi.Description, `List the files of a channel's workspace, recursively, with size and modification time. ${disabled}`)
  )
  .add(
    HttpApiEndpoint.get("read", "/api/v1/channels/:id/workspace/files/*")
      .setPath(filePath)
      .addSuccess(WorkspaceFile)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces.files:read")
      .annotate(OpenApi.Description, `Read a workspace file: UTF-8 text as is, anything else base64 (see encoding). ${disabled}`)
  )
  .add(
    HttpApiEndpoint.put("write", "/api/v1/channels/:id/workspace/files/*")
      .setPath(filePath)
      .setPayload(WriteFile)
      .addSuccess(WrittenFile)
      .addError(detailBody(WorkspaceConflict))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "workspaces.files:write")
      .annotate(
        OpenApi.Description,
        `Write a workspace file (10 MiB at most), making its directories; content is text, or base64 with encoding "base64". ${disabled}`
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/channels/:id/workspace/files/*")
      .setPath(filePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces.files:write")
      .annotate(OpenApi.Description, `Delete a workspace file. ${disabled}`)
  )
  .add(
    HttpApiEndpoint.get("readFile", "/api/v1/channels/:id/workspace/file")
      .setPath(channelPath)
      .setUrlParams(fileQuery)
      .addSuccess(WorkspaceFile)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces.files:read")
      .annotate(OpenApi.Description, `Read the workspace file at ?path= (as GET …/workspace/files/{path}). ${disabled}`)
  )
  .add(
    HttpApiEndpoint.put("writeFile", "/api/v1/channels/:id/workspace/file")
      .setPath(channelPath)
      .setUrlParams(fileQuery)
      .setPayload(WriteFile)
      .addSuccess(WrittenFile)
      .addError(detailBody(WorkspaceConflict))
      .annotate(BodyLimit, "files")
      .annotate(RequiredScope, "workspaces.files:write")
      .annotate(OpenApi.Description, `Write the workspace file at ?path= (as PUT …/workspace/files/{path}). ${disabled}`)
  )
  .add(
    HttpApiEndpoint.del("deleteFile", "/api/v1/channels/:id/workspace/file")
      .setPath(channelPath)
      .setUrlParams(fileQuery)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces.files:write")
      .annotate(OpenApi.Description, `Delete the workspace file at ?path= (as DELETE …/workspace/files/{path}). ${disabled}`)
  )
  .add(
    HttpApiEndpoint.post("applyTemplate", "/api/v1/channels/:id/workspace/template")
      .setPath(channelPath)
      .setPayload(ApplyTemplate)
      .addSuccess(AppliedTemplate)
      .addError(detailBody(WorkspaceConflict))
      .annotate(RequiredScope, "workspaces:write")
      .annotate(
        OpenApi.Description,
        `Write a template's files into a channel's workspace; existing files are kept unless overwrite is true. ${disabled}`
      )
  )
  .add(
    HttpApiEndpoint.get("templates", "/api/v1/workspace-templates")
      .addSuccess(WorkspaceTemplateList)
      .annotate(RequiredScope, "workspaces:read")
      .annotate(OpenApi.Description, "List the workspace templates (the project's and those integrations registered)")
  )
  .addError(detailBody(WorkspaceFileNotFound))
  .addError(detailBody(ChannelNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Workspaces")
{}
