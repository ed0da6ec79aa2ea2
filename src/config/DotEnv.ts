/**
 * `.env` support: the file's values sit beneath the real environment, so an exported variable always
 * wins. Only simple `KEY=value` lines (optionally quoted, `#` comments) are understood.
 */
import { ConfigProvider } from "effect"
import * as fs from "node:fs"

export const parseDotEnv = (text: string): Map<string, string> => {
  const values = new Map<string, string>()
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim()
    if (line === "" || line.startsWith("#")) continue
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!match) continue
    let value = match[2]!
    if ((value.startsWith("\"") && value.endsWith("\"")) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1)
    } else {
      value = value.replace(/\s+#.*$/, "")
    }
    values.set(match[1]!, value)
  }
  return values
}

/** The environment, falling back to `.env` in the working directory when it exists. */
export const configProvider = (path = ".env"): ConfigProvider.ConfigProvider => {
  const fromEnv = ConfigProvider.fromEnv()
  if (!fs.existsSync(path)) return fromEnv
  const fromFile = ConfigProvider.fromMap(parseDotEnv(fs.readFileSync(path, "utf8")))
  return ConfigProvider.orElse(fromEnv, () => fromFile)
}
