/** Channel workspaces: files, file contents, templates. */
import { Schema } from "effect"
import { bodyOptions } from "../contract/Params.ts"

const Timestamp = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/** Largest file the API writes or a template holds: 10 MiB (decoded bytes). */
export const maxFileBytes = 10 * 1024 * 1024
/** A listing stops after this many files and says it did. */
export const maxListedFiles = 10_000

export const FileEncoding = Schema.Literal("utf8", "base64")
export type FileEncoding = typeof FileEncoding.Type

export class WorkspaceFileInfo extends Schema.Class<WorkspaceFileInfo>("WorkspaceFileInfo")({
  /** Relative to the workspace root, '/' between segments. */
  path: Schema.String,
  size: Schema.Int,
  modified_at: Timestamp
}) {}

export class WorkspaceFileList extends Schema.Class<WorkspaceFileList>("WorkspaceFileList")({
  files: Schema.Array(WorkspaceFileInfo),
  /** True when the workspace holds more than the listing limit. */
  truncated: Schema.Boolean
}) {}

/** A file's content: text as is (utf8) or, for anything that is not valid UTF-8 text, base64. */
export class WorkspaceFile extends Schema.Class<WorkspaceFile>("WorkspaceFile")({
  path: Schema.String,
  encoding: FileEncoding,
  content: Schema.String,
  size: Schema.Int,
  modified_at: Timestamp
}) {}

export class WriteFile extends Schema.Class<WriteFile>("WriteFile")(
  {
    content: Schema.String,
    encoding: Schema.optionalWith(FileEncoding, { default: () => "utf8" as const, exact: true })
  },
  bodyOptions
) {}

export class WrittenFile extends Schema.Class<WrittenFile>("WrittenFile")({
  path: Schema.String,
  size: Schema.Int,
  modified_at: Timestamp,
  /** False when an existing file was replaced. */
  created: Schema.Boolean
}) {}

export const TemplateId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: () => "template ids are 1-64 characters: lowercase letters, digits, '-' and '_'"
  })
)

/** A workspace template: named initial files. */
export const TemplateDefinition = Schema.Struct({
  id: TemplateId,
  name: Schema.String.pipe(Schema.minLength(1)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  files: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type TemplateDefinition = typeof TemplateDefinition.Type
export type TemplateInput = typeof TemplateDefinition.Encoded

export class WorkspaceTemplate extends Schema.Class<WorkspaceTemplate>("WorkspaceTemplate")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  /** Where it came from: `core` (workspace-templates/) or what registered it. */
  source: Schema.String,
  files: Schema.Array(Schema.String),
  /** The integrations whose activation manifest names this template as made for their channels. */
  integrations: Schema.Array(Schema.String)
}) {}

export class WorkspaceTemplateList extends Schema.Class<WorkspaceTemplateList>("WorkspaceTemplateList")({
  templates: Schema.Array(WorkspaceTemplate)
}) {}

export class ApplyTemplate extends Schema.Class<ApplyTemplate>("ApplyTemplate")(
  {
    template_id: Schema.String.pipe(Schema.minLength(1)),
    /** Replace files that already exist (default: leave them as they are). */
    overwrite: Schema.optionalWith(Schema.Boolean, { default: () => false, exact: true })
  },
  bodyOptions
) {}

export class AppliedTemplate extends Schema.Class<AppliedTemplate>("AppliedTemplate")({
  template_id: Schema.String,
  written: Schema.Array(Schema.String),
  skipped: Schema.Array(Schema.String)
}) {}
