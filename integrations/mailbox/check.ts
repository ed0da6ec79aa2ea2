/** Test connection (the settings form's button): log in with the settings as given and list the folders. */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { close, connect } from "./imap.ts"

export const checkConnection = async (_cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>) => {
  const read = readConfig(settings)
  if (!read.ok) throw new Error(read.error)
  const client = await connect(read.config)
  try {
    const folders = (await client.list()).map((folder) => folder.path)
    const missing = read.config.folders.filter((folder) => !folders.includes(folder))
    const shown = folders.slice(0, 8).join(", ") + (folders.length > 8 ? ", …" : "")
    return `Logged in to ${read.config.host} as ${read.config.user}; ${folders.length} folders: ${shown}${
      missing.length > 0 ? `. Not found: ${missing.join(", ")} (MAILBOX_FOLDERS)` : ""
    }`
  } finally {
    await close(client)
  }
}
