/**
 * What the bot editor's pickers offer, each read only when the user may read it: the tools (core
 * and integrations'), the built-in client tools, the skills, the carapaces, the models and the
 * scoped keys.
 * Undefined: the user may not read that list, and the field falls back to typing names.
 */
import { useEffect, useState } from "react"
import { builtInClientTools } from "../../../bots/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { loadModelIds } from "./models.ts"
import type { PickOption } from "./Picker.tsx"

export interface BotOptions {
  readonly tools: ReadonlyArray<PickOption> | undefined
  readonly clientTools: ReadonlyArray<PickOption>
  readonly skills: ReadonlyArray<PickOption> | undefined
  readonly carapaces: ReadonlyArray<PickOption> | undefined
  readonly models: ReadonlyArray<string>
  readonly keys: ReadonlyArray<{ readonly value: string; readonly label: string }> | undefined
}

const clientTools: ReadonlyArray<PickOption> = [...builtInClientTools.values()].map((tool) => ({
  name: tool.name,
  description: tool.description
}))

const optional = <A>(permitted: boolean, load: () => Promise<A>): Promise<A | undefined> =>
  permitted ? load().catch(() => undefined) : Promise.resolve(undefined)

export const useBotOptions = (auth: AuthSession): BotOptions => {
  const [options, setOptions] = useState<BotOptions>({
    tools: undefined,
    clientTools,
    skills: undefined,
    carapaces: undefined,
    models: [],
    keys: undefined
  })
  useEffect(() => {
    let live = true
    void Promise.all([
      optional(
        allows(auth, ["integrations", "tools"]),
        () =>
          auth.call((client) => client.integrations.tools()).then((tools) =>
            tools.map((tool) => ({ name: tool.tool_name, description: tool.description, source: tool.source })).sort((a, b) =>
              a.name.localeCompare(b.name)
            )
          )
      ),
      optional(
        allows(auth, ["skills", "list"]),
        () =>
          auth.call((client) => client.skills.list()).then(({ skills }) =>
            skills.map((skill) => ({ name: skill.id, description: skill.title, source: skill.source }))
          )
      ),
      optional(
        allows(auth, ["carapaces", "list"]),
        () =>
          auth.call((client) => client.carapaces.list()).then(({ carapaces }) =>
            carapaces.map((carapace) => ({ name: carapace.id, description: carapace.description || carapace.name }))
          )
      ),
      loadModelIds(auth).catch(() => []),
      optional(
        allows(auth, ["apiKeys", "list"]),
        () =>
          auth.call((client) => client.apiKeys.list()).then(({ keys }) =>
            keys.filter((key) => key.status === "active").map((key) => ({ value: key.id, label: `${key.name} (${key.prefix}…)` }))
          )
      )
    ]).then(([tools, skills, carapaces, models, keys]) => {
      if (live) setOptions({ tools, clientTools, skills, carapaces, models, keys })
    })
    return () => {
      live = false
    }
  }, [auth])
  return options
}
