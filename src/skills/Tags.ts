/**
 * `@skill:<id>` tags in a message: they name skills for that one turn, merged with the task's
 * execution_config.skills (configured ones first, each id once).
 */

// Ids are file stems or paths (`integrations/<name>/<stem>`); a trailing `.`/`/` is punctuation.
const skillTag = /(?:^|[^\w@])@skill:([A-Za-z0-9_][A-Za-z0-9_./-]*)/g

/** The skill ids tagged in a text, in order of first appearance, without duplicates. */
export const skillTags = (text: string): ReadonlyArray<string> => {
  const ids: Array<string> = []
  for (const match of text.matchAll(skillTag)) {
    const id = match[1]!.replace(/[./-]+$/, "")
    if (id && !ids.includes(id)) ids.push(id)
  }
  return ids
}

/** `configured` then the ids tagged in `text`, each once. */
export const mergeSkills = (configured: ReadonlyArray<string> | undefined, text: string): ReadonlyArray<string> => [
  ...new Set([...(configured ?? []), ...skillTags(text)])
]
