/**
 * Workspace templates: named sets of initial files. The project's `workspace-templates/*.yaml`
 * are read at startup; integrations add theirs with `Workspaces.registerTemplate`.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import YAML from "yaml"
import { projectDir } from "../config/ProjectRoot.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { maxFileBytes, TemplateDefinition, type TemplateInput } from "./Model.ts"
import { joinSegments, parseWorkspacePath } from "./Paths.ts"

export const projectTemplatesDir = projectDir("workspace-templates")

const decodeTemplate = Schema.decodeUnknownEither(TemplateDefinition, { errors: "all" })

/** A template checked and normalised: every file path is a valid workspace path, every file within the size limit. */
export const validateTemplate = (input: TemplateInput | unknown): Either.Either<TemplateDefinition, ValidationError> => {
  const decoded = decodeTemplate(input)
  if (Either.isLeft(decoded)) {
    return Either.left(
      new ValidationError({
        detail: ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map(
          (issue) => new ValidationIssue({ loc: ["template", ...issue.path.map(String)], msg: issue.message, type: "value_error" })
        )
      })
    )
  }
  const issues: Array<ValidationIssue> = []
  const files: Record<string, string> = {}
  for (const [name, content] of Object.entries(decoded.right.files)) {
    const parsed = parseWorkspacePath(name)
    if (Either.isLeft(parsed)) {
      issues.push(new ValidationIssue({ loc: ["template", "files", name], msg: parsed.left, type: "invalid_path" }))
    } else if (Buffer.byteLength(content) > maxFileBytes) {
      issues.push(
        new ValidationIssue({ loc: ["template", "files", name], msg: `file is larger than ${maxFileBytes} bytes`, type: "file_too_large" })
      )
    } else {
      files[joinSegments(parsed.right)] = content
    }
  }
  if (issues.length > 0) return Either.left(new ValidationError({ detail: issues }))
  return Either.right({ ...decoded.right, files })
}

/** The templates of a directory's `*.yaml`/`*.yml` files; a broken file is logged and skipped. */
export const readTemplateFiles = (dir: string) =>
  Effect.gen(function*() {
    const found: Array<TemplateDefinition> = []
    if (!fs.existsSync(dir)) return found
    for (const file of fs.readdirSync(dir).sort()) {
      if (!/\.ya?ml$/.test(file)) continue
      const where = path.join(dir, file)
      const parsed = Either.try(() => YAML.parse(fs.readFileSync(where, "utf8")) as unknown)
      if (Either.isLeft(parsed)) {
        yield* Effect.logError(`Skipping workspace template ${where}: ${String(parsed.left)}`)
        continue
      }
      const template = validateTemplate(parsed.right)
      if (Either.isLeft(template)) {
        const why = template.left.detail.map((issue) => `${issue.loc.join(".")}: ${issue.msg}`).join("; ")
        yield* Effect.logError(`Skipping workspace template ${where}: ${why}`)
        continue
      }
      found.push(template.right)
    }
    return found
  })
