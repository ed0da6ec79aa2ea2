/**
 * What this integration's files share in one server process: its context, and what it registered
 * at load (the diagnose route reports both).
 */
import type { IntegrationContext } from "../../src/sdk/index.ts"

let context: IntegrationContext | undefined
export const registered = { metadata: false, dispatcher: false }

export const useContext = (cairn: IntegrationContext) => {
  context = cairn
}

export const cairnContext = (): IntegrationContext => {
  if (!context) throw new Error("The messaging bridge has not loaded")
  return context
}
