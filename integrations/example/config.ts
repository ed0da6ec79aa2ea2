/** The example's own settings, read through the SDK: stored value, then environment, then the SETUP default. */
import { type IntegrationContext, readSettings } from "../../src/sdk/index.ts"
import { SETUP } from "./setup.ts"

export const greeting = async (cairn: IntegrationContext): Promise<string> => {
  const settings = readSettings(SETUP, await cairn.settings.all())
  if (!settings.ok) throw new Error(settings.error)
  return settings.values.EXAMPLE_GREETING
}
