/** The example's own settings, read through the SDK: stored value, then environment, then default. */
import type { IntegrationContext } from "../../src/sdk/index.ts"

export const greeting = async (cairn: IntegrationContext): Promise<string> => (await cairn.settings.get("EXAMPLE_GREETING")) ?? "Hello"
