/**
 * Skill documents: markdown files in the project's `skills/` (id = file stem) and, registered by
 * the integration loader, each integration's `skills/` (id `integrations/<name>/<stem>`). Their full
 * content is injected into a bot's context when the bot (or a task) names them.
 */
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { projectDir } from "../config/ProjectRoot.ts"

export const projectSkillsDir = projectDir("skills")

export interface Skill {
  readonly id: string
  readonly title: string
  readonly content: string
  readonly source: string
}

export interface SkillLibraryShape {
  readonly get: (id: string) => Skill | undefined
  readonly list: () => ReadonlyArray<Skill>
  readonly register: (skill: Skill) => Effect.Effect<void>
}

export class SkillLibrary extends Context.Tag("cairn/SkillLibrary")<SkillLibrary, SkillLibraryShape>() {}

const titleOf = (content: string, fallback: string) => /^#\s+(.+)$/m.exec(content)?.[1]?.trim() ?? fallback

/** The markdown files of a directory as skills, ids prefixed as given. */
export const readSkillDir = (dir: string, idPrefix: string, source: string): Array<Skill> =>
  fs.existsSync(dir)
    ? fs
      .readdirSync(dir)
      .filter((file) => file.endsWith(".md"))
      .sort()
      .map((file) => {
        const content = fs.readFileSync(path.join(dir, file), "utf8")
        const stem = file.slice(0, -3)
        return { id: `${idPrefix}${stem}`, title: titleOf(content, stem), content, source }
      })
    : []

export const layer = Layer.effect(
  SkillLibrary,
  Effect.sync(() => {
    const skills = new Map(readSkillDir(projectSkillsDir, "", "core").map((skill) => [skill.id, skill]))
    return {
      get: (id) => skills.get(id),
      list: () => [...skills.values()],
      register: (skill) => Effect.sync(() => void skills.set(skill.id, skill))
    }
  })
)
