/** The integration's context for its tool (which runs without one of its own), and what registered. */
import type { IntegrationContext } from "../../src/sdk/index.ts"

let context: IntegrationContext | undefined

export const registered = { metadata: false, dispatcher: false }

export const useContext = (cairn: IntegrationContext) => {
  context = cairn
}

export const cairnContext = (): IntegrationContext => {
  if (!context) throw new Error("The github integration has not loaded")
  return context
}
