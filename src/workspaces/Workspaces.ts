/**
 * Channel workspaces: a directory per channel under DATA_DIR/workspaces/<channel id>/, usable
 * while the channel's workspace_enabled is on and made on first use. The HTTP file API and the
 * SDK both come through here, so the path rules hold for every caller.
 */
import { Effect, Either } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Channels } from "../channels/Channels.ts"
import { ChannelNotFound } from "../channels/Errors.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { base64Pattern } from "../contract/Base64.ts"
import { ValidationError } from "../contract/Errors.ts"
import { traced } from "../telemetry/Spans.ts"
import { buildContextListing } from "./Context.ts"
import { WorkspaceConflict, WorkspaceFileNotFound } from "./Errors.ts"
import {
  AppliedTemplate,
  type FileEncoding,
  maxFileBytes,
  maxListedFiles,
  type TemplateDefinition,
  type TemplateInput,
  WorkspaceFile,
  WorkspaceFileInfo,
  WorkspaceFileList,
  WorkspaceTemplate,
  WrittenFile
} from "./Model.ts"
import { isInside, joinSegments, parseWorkspacePath, resolveInside } from "./Paths.ts"
import { projectTemplatesDir, readTemplateFiles, validateTemplate } from "./Templates.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Prefix of the temporary files writes go through (renamed into place); never listed. */
const tempPrefix = ".cairn-tmp-"

type FileError = WorkspaceFileNotFound | WorkspaceConflict | ValidationError

const pathError = (msg: string, type = "invalid_path") => ValidationError.single(["path", "path"], msg, type)

const isText = (bytes: Uint8Array) => {
  if (bytes.includes(0)) return false
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/** Known file-system failures in the spec's terms; anything else is a defect (500, logged). */
const fsFailure = (rel: string) => (error: unknown): Effect.Effect<never, FileError> => {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === "ENOENT") return Effect.fail(new WorkspaceFileNotFound({ detail: `File not found: ${rel}` }))
  if (code === "EISDIR") return Effect.fail(new WorkspaceConflict({ detail: `${rel} is a directory` }))
  if (code === "ENOTDIR" || code === "EEXIST") return Effect.fail(new WorkspaceConflict({ detail: `A parent of ${rel} is a file` }))
  return Effect.die(error)
}

const attempt = <A>(rel: string, run: () => A): Effect.Effect<A, FileError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(run())
    } catch (error) {
      return fsFailure(rel)(error)
    }
  })

export interface RegisteredTemplate {
  readonly definition: TemplateDefinition
  readonly source: string
}

export class Workspaces extends Effect.Service<Workspaces>()("cairn/Workspaces", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const channels = yield* Channels
    const workspacesDir = path.resolve(config.dataDir, "workspaces")

    // Templates live in memory: the project's are read here, integrations register theirs at
    // every startup. Bounded by the number of template files and integrations.
    const templates = new Map<string, RegisteredTemplate>()
    for (const definition of yield* readTemplateFiles(projectTemplatesDir)) {
      templates.set(definition.id, { definition, source: "core" })
    }

    /** The real root of an enabled channel's workspace, made when missing. */
    const root = (channelId: string): Effect.Effect<string, ChannelNotFound | WorkspaceConflict> =>
      Effect.gen(function*() {
        // SDK callers pass ids unchecked; a non-uuid is no channel (and never reaches the database).
        if (!uuidPattern.test(channelId)) return yield* new ChannelNotFound({ detail: `Channel not found: ${channelId}` })
        const channel = yield* channels.get(channelId)
        if (!channel.workspace_enabled) {
          return yield* new WorkspaceConflict({
            detail: `The workspace of channel ${channelId} is not enabled (set workspace_enabled on the channel)`
          })
        }
        const dir = path.join(workspacesDir, channel.id)
        return yield* Effect.sync(() => {
          fs.mkdirSync(dir, { recursive: true })
          return fs.realpathSync(dir)
        })
      })

    /** The parsed path and its real location inside the workspace. */
    const locate = (realRoot: string, raw: string) =>
      Effect.gen(function*() {
        const segments = parseWorkspacePath(raw)
        if (Either.isLeft(segments)) return yield* pathError(segments.left)
        const rel = joinSegments(segments.right)
        const target = resolveInside(realRoot, segments.right)
        if (Either.isLeft(target)) return yield* pathError(target.left, "path_outside_workspace")
        if (target.right === realRoot) return yield* pathError("path must name a file")
        // The entry itself (a link stays a link): its parent resolved, its own name kept.
        const parent = resolveInside(realRoot, segments.right.slice(0, -1))
        const entry = Either.isRight(parent) ? path.join(parent.right, segments.right.at(-1)!) : target.right
        return { rel, target: target.right, entry }
      })

    const listIn = (realRoot: string) =>
      Effect.sync(() => {
        const files: Array<WorkspaceFileInfo> = []
        let truncated = false
        const walk = (dir: string, prefix: string) => {
          for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
            if (truncated) return
            if (entry.name.startsWith(tempPrefix)) continue
            const full = path.join(dir, entry.name)
            const rel = prefix ? `${prefix}/${entry.name}` : entry.name
            let stat: fs.Stats
            if (entry.isSymbolicLink()) {
              // Listed only when it points at a file inside; linked directories are not entered.
              let real: string
              try {
                real = fs.realpathSync(full)
              } catch {
                continue
              }
              if (!isInside(realRoot, real)) continue
              stat = fs.statSync(real)
              if (!stat.isFile()) continue
            } else if (entry.isDirectory()) {
              walk(full, rel)
              continue
            } else if (entry.isFile()) {
              stat = fs.statSync(full)
            } else {
              continue
            }
            if (files.length >= maxListedFiles) {
              truncated = true
              return
            }
            files.push(new WorkspaceFileInfo({ path: rel, size: stat.size, modified_at: stat.mtime }))
          }
        }
        walk(realRoot, "")
        return new WorkspaceFileList({ files, truncated })
      })

    /** Every file of the workspace, recursively, by path. */
    const list = (channelId: string) => Effect.flatMap(root(channelId), listIn)

    /** A file's bytes. */
    const readBytes = (channelId: string, filePath: string) =>
      Effect.gen(function*() {
        const { rel, target } = yield* locate(yield* root(channelId), filePath)
        const stat = yield* attempt(rel, () => fs.statSync(target))
        if (stat.isDirectory()) return yield* new WorkspaceConflict({ detail: `${rel} is a directory` })
        if (stat.size > maxFileBytes) {
          return yield* new WorkspaceConflict({ detail: `${rel} is larger than ${maxFileBytes} bytes and cannot be read through the API` })
        }
        const bytes = yield* attempt(rel, () => fs.readFileSync(target))
        return { rel, bytes: new Uint8Array(bytes), modified_at: stat.mtime }
      })

    /** A file as text, or base64 when it is not UTF-8 text. */
    const read = (channelId: string, filePath: string) =>
      Effect.map(readBytes(channelId, filePath), ({ bytes, modified_at, rel }) => {
        const text = isText(bytes)
        return new WorkspaceFile({
          path: rel,
          encoding: text ? "utf8" : "base64",
          content: Buffer.from(bytes).toString(text ? "utf8" : "base64"),
          size: bytes.byteLength,
          modified_at
        })
      })

    const decodeContent = (content: string | Uint8Array, encoding: FileEncoding) => {
      if (typeof content !== "string") return Effect.succeed(content)
      if (encoding === "utf8") return Effect.succeed(new Uint8Array(Buffer.from(content, "utf8")))
      if (!base64Pattern.test(content)) {
        return Effect.fail(ValidationError.single(["body", "content"], "content is not valid base64", "invalid_base64"))
      }
      return Effect.succeed(new Uint8Array(Buffer.from(content, "base64")))
    }

    const writeAt = (rel: string, target: string, bytes: Uint8Array) =>
      attempt(rel, () => {
        let existed = false
        try {
          if (fs.statSync(target).isDirectory()) throw Object.assign(new Error(`${rel} is a directory`), { code: "EISDIR" })
          existed = true
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
        }
        const dir = path.dirname(target)
        fs.mkdirSync(dir, { recursive: true })
        // Written beside the target and renamed over it, so a reader never sees half a file.
        const temp = path.join(dir, `${tempPrefix}${crypto.randomBytes(6).toString("hex")}`)
        try {
          fs.writeFileSync(temp, bytes, { flag: "wx" })
          fs.renameSync(temp, target)
        } catch (error) {
          fs.rmSync(temp, { force: true })
          throw error
        }
        const stat = fs.statSync(target)
        return new WrittenFile({ path: rel, size: stat.size, modified_at: stat.mtime, created: !existed })
      })

    /** Writes a file, making its directories; replaces an existing file. */
    const write = (channelId: string, filePath: string, content: string | Uint8Array, encoding: FileEncoding = "utf8") =>
      Effect.gen(function*() {
        const realRoot = yield* root(channelId)
        const { rel, target } = yield* locate(realRoot, filePath)
        const bytes = yield* decodeContent(content, encoding)
        if (bytes.byteLength > maxFileBytes) {
          return yield* ValidationError.single(
            ["body", "content"],
            `file is ${bytes.byteLength} bytes; the limit is ${maxFileBytes} bytes`,
            "file_too_large"
          )
        }
        return yield* writeAt(rel, target, bytes)
      })

    /** Deletes a file or a link to one (not a directory). */
    const remove = (channelId: string, filePath: string) =>
      Effect.gen(function*() {
        const { entry, rel } = yield* locate(yield* root(channelId), filePath)
        const stat = yield* attempt(rel, () => fs.lstatSync(entry))
        if (stat.isDirectory()) return yield* new WorkspaceConflict({ detail: `${rel} is a directory` })
        // A symbolic link (already checked to stay inside) is removed, not the file it points at.
        yield* attempt(rel, () => fs.rmSync(entry))
      })

    /**
     * What the agent loop puts in the system prompt about the workspace: the text files outside
     * `data/` with their content (within limits), the files under `data/` by name only. Empty when
     * the channel has no enabled workspace or it holds nothing.
     */
    const contextListing = (channelId: string): Effect.Effect<string, never> =>
      root(channelId).pipe(
        Effect.flatMap((realRoot) =>
          Effect.flatMap(listIn(realRoot), (listing) =>
            Effect.sync(() =>
              buildContextListing(listing.files, (rel) => {
                const target = resolveInside(realRoot, rel.split("/"))
                return Either.isRight(target) ? fs.readFileSync(target.right) : new Uint8Array()
              })
            ))
        ),
        Effect.catchTags({ ChannelNotFound: () => Effect.succeed(""), WorkspaceConflict: () => Effect.succeed("") })
      )

    // Integration id -> the template ids its activation manifest declares compatible.
    const compatibility = new Map<string, ReadonlyArray<string>>()

    const toTemplate = ({ definition, source }: RegisteredTemplate) =>
      new WorkspaceTemplate({
        id: definition.id,
        name: definition.name,
        description: definition.description,
        source,
        files: Object.keys(definition.files).sort(),
        integrations: [...compatibility].filter(([, ids]) => ids.includes(definition.id)).map(([integration]) => integration).sort()
      })

    /** Records the templates an integration is made to work with (replacing what it named before). */
    const declareCompatibleTemplates = (integrationId: string, templateIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const unknown = templateIds.filter((id) => !templates.has(id))
        if (unknown.length > 0) {
          yield* Effect.logWarning(`Integration ${integrationId} names unknown workspace templates: ${unknown.join(", ")}`)
        }
        compatibility.set(integrationId, [...templateIds])
      })

    /** Adds (or replaces, by id) a template; integrations call this at startup. */
    const registerTemplate = (input: TemplateInput, source = "integration"): Effect.Effect<WorkspaceTemplate, ValidationError> =>
      Effect.gen(function*() {
        const definition = yield* validateTemplate(input)
        const previous = templates.get(definition.id)
        if (previous && previous.source !== source) {
          yield* Effect.logWarning(`Workspace template ${definition.id} from ${source} replaces the one from ${previous.source}`)
        }
        const registered = { definition, source }
        templates.set(definition.id, registered)
        return toTemplate(registered)
      })

    const listTemplates = Effect.sync(() =>
      [...templates.values()].map(toTemplate).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    )

    /** Writes a template's files into the workspace; existing files are kept unless `overwrite`. */
    const applyTemplate = (channelId: string, templateId: string, overwrite = false) =>
      Effect.gen(function*() {
        const template = templates.get(templateId)
        if (!template) {
          return yield* ValidationError.single(["body", "template_id"], `Unknown workspace template: ${templateId}`, "unknown_template")
        }
        const realRoot = yield* root(channelId)
        const written: Array<string> = []
        const skipped: Array<string> = []
        for (const [rel, content] of Object.entries(template.definition.files).sort(([a], [b]) => (a < b ? -1 : 1))) {
          const { target } = yield* locate(realRoot, rel)
          if (!overwrite && fs.existsSync(target)) {
            skipped.push(rel)
            continue
          }
          yield* writeAt(rel, target, new Uint8Array(Buffer.from(content, "utf8")))
          written.push(rel)
        }
        return new AppliedTemplate({ template_id: templateId, written, skipped })
      })

    return traced(
      "Workspaces",
      {
        root,
        list,
        read,
        readBytes,
        write,
        remove,
        contextListing,
        registerTemplate,
        declareCompatibleTemplates,
        listTemplates,
        applyTemplate
      } as const
    )
  }),
  dependencies: [Channels.Default]
}) {}
