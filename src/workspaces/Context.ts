/**
 * The workspace section of a bot's system prompt. Text files outside `data/` are the bot's working
 * notes and go in with their content; files under `data/` (mail, feeds an integration delivers) are
 * listed by name only, newest first, for the bot to open when it needs one.
 */
import type { WorkspaceFileInfo } from "./Model.ts"

/** Content of one injected file, at most. */
export const maxInjectedFileBytes = 8 * 1024
/** Content of all injected files together, at most. */
export const maxInjectedTotalBytes = 32 * 1024
/** Names listed per section, at most. */
export const maxListedNames = 200

const isDataFile = (rel: string) => rel.startsWith("data/")

const humanSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

const decodeText = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

export const buildContextListing = (
  files: ReadonlyArray<WorkspaceFileInfo>,
  readFile: (rel: string) => Uint8Array
): string => {
  if (files.length === 0) return ""
  const notes = files.filter((file) => !isDataFile(file.path))
  const data = files.filter((file) => isDataFile(file.path)).sort((a, b) => b.modified_at.getTime() - a.modified_at.getTime())
  const lines: Array<string> = ["## Channel workspace", ""]
  let budget = maxInjectedTotalBytes
  const listedOnly: Array<string> = []
  for (const file of notes) {
    const text = file.size <= maxInjectedFileBytes && file.size <= budget ? decodeText(readFile(file.path)) : undefined
    if (text === undefined) {
      listedOnly.push(`- ${file.path} (${humanSize(file.size)})`)
      continue
    }
    budget -= file.size
    lines.push(`### ${file.path}`, "", text.trimEnd(), "")
  }
  if (listedOnly.length > 0) {
    lines.push("Other workspace files (not loaded; read them with the workspace file tools):")
    lines.push(...listedOnly.slice(0, maxListedNames))
    if (listedOnly.length > maxListedNames) lines.push(`- ... and ${listedOnly.length - maxListedNames} more`)
    lines.push("")
  }
  if (data.length > 0) {
    lines.push("Data files (listed, not loaded; read one with the workspace file tools when you need it), newest first:")
    for (const file of data.slice(0, maxListedNames)) {
      lines.push(`- ${file.path} (${humanSize(file.size)}, ${file.modified_at.toISOString().slice(0, 10)})`)
    }
    if (data.length > maxListedNames) lines.push(`- ... and ${data.length - maxListedNames} older files`)
  }
  return lines.join("\n").trimEnd()
}
