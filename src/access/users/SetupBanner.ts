/**
 * The first start's setup code as a person reads it: a plain box on standard error with the
 * address to open, beside the JSON log line written for machines and curl. No colour, so it reads
 * the same in a terminal, `docker logs` and journald.
 */

/** The address the web app is reached at on this machine, when the port is known (0 is picked at start). */
export const localUrl = (host: string, port: number) =>
  port === 0 ? undefined : `http://${host === "0.0.0.0" || host === "::" ? "localhost" : host}:${port}/`

export const setupBanner = (code: string, url: string | undefined) => {
  const lines = [
    "Cairn has no administrator yet.",
    "",
    url === undefined ? "Open the web app and create the first admin" : `Open ${url} and create the first admin`,
    "with this setup code:",
    "",
    `    ${code}`,
    "",
    "The code stays the same across restarts; it works once."
  ]
  const width = Math.max(...lines.map((line) => line.length))
  const rule = `+${"-".repeat(width + 4)}+`
  return [rule, ...lines.map((line) => `|  ${line.padEnd(width)}  |`), rule].join("\n") + "\n"
}
