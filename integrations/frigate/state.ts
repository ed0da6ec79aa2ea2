/** What this integration's files share in one server process: its context (the tool has none of its own). */
import type { IntegrationContext } from "../../src/sdk/index.ts"

let context: IntegrationContext | undefined

export const registered = { metadata: false }

export const useContext = (cairn: IntegrationContext) => {
  context = cairn
}

export const cairnContext = (): IntegrationContext => {
  if (!context) throw new Error("The frigate integration has not loaded")
  return context
}
