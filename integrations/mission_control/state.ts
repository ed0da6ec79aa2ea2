/** The integration's context, for the tools (which run without one of their own). */
import type { IntegrationContext } from "../../src/sdk/index.ts"

let context: IntegrationContext | undefined

export const useContext = (cairn: IntegrationContext) => {
  context = cairn
}

export const cairnContext = (): IntegrationContext => {
  if (!context) throw new Error("The mission_control integration has not loaded")
  return context
}
