/**
 * A screening corpus of raw mails (`index.json` plus `.eml` files), read and parsed once, and its
 * rates under layers 1-2 alone (a classifier that says "safe" to everything). Shared by the corpus
 * tests and `bench/mailScreening.ts`.
 */
import { simpleParser } from "mailparser"
import * as fs from "node:fs"
import * as path from "node:path"
import { type ParsedMail, screen } from "../../integrations/mailbox/screening/pipeline.ts"

export interface CorpusMail {
  readonly file: string
  readonly kind: "injection" | "ordinary"
  readonly techniques: ReadonlyArray<string>
  readonly raw: Buffer
  readonly mail: ParsedMail
}

export const readCorpus = async (dir: string): Promise<Array<CorpusMail>> => {
  const index: Array<{ file: string; kind: "injection" | "ordinary"; techniques?: Array<string> }> = JSON.parse(
    fs.readFileSync(path.join(dir, "index.json"), "utf8")
  )
  return Promise.all(
    index.map(async (entry, i) => {
      const raw = fs.readFileSync(path.join(dir, entry.file))
      const parsed = await simpleParser(raw)
      const mail: ParsedMail = {
        folder: "INBOX",
        uid: i + 1,
        messageId: parsed.messageId ?? `<${entry.file}@corpus>`,
        from: parsed.from?.text ?? "",
        to: "agent@example.org",
        date: (parsed.date ?? new Date()).toISOString(),
        subject: parsed.subject ?? "",
        text: parsed.text,
        html: typeof parsed.html === "string" ? parsed.html : undefined,
        attachments: []
      }
      return { file: entry.file, kind: entry.kind, techniques: entry.techniques ?? [], raw, mail }
    })
  )
}

/** A classifier that answers "safe" at once (after `delayMs`), so only layers 1-2 can quarantine. */
export const alwaysSafe = (delayMs = 0) => async () => {
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
  return { content: "", model: "fake", usage: null, json: { safe: true, reason: "fake", risk_level: "low" as const } }
}

export const screeningOptions = {
  quarantineLevel: "high" as const,
  classifier: { model: undefined, timeoutMs: 10_000, retryMs: 1, retries: 0 }
}

export interface CorpusRates {
  readonly injections: number
  readonly ordinary: number
  readonly caught: number
  readonly falseAlarms: number
  readonly missed: ReadonlyArray<string>
  readonly flagged: ReadonlyArray<string>
}

/** How many injections layers 1-2 quarantine, and how many ordinary mails they stop by mistake. */
export const ratesOf = async (corpus: ReadonlyArray<CorpusMail>): Promise<CorpusRates> => {
  const missed: Array<string> = []
  const flagged: Array<string> = []
  let injections = 0
  let ordinary = 0
  for (const entry of corpus) {
    const decision = await screen(entry.mail, screeningOptions, alwaysSafe())
    const quarantined = decision.outcome === "quarantined"
    if (entry.kind === "injection") {
      injections += 1
      if (!quarantined) missed.push(`${entry.file} (${entry.techniques.join(", ")})`)
    } else {
      ordinary += 1
      if (decision.outcome === "quarantined") flagged.push(`${entry.file}: ${decision.reason}`)
    }
  }
  return { injections, ordinary, caught: injections - missed.length, falseAlarms: flagged.length, missed, flagged }
}

export const describeRates = (name: string, rates: CorpusRates) =>
  [
    `${name}: ${rates.caught}/${rates.injections} injections quarantined (${((rates.caught / rates.injections) * 100).toFixed(1)}%), ` +
    `${rates.falseAlarms}/${rates.ordinary} ordinary mails quarantined (${((rates.falseAlarms / rates.ordinary) * 100).toFixed(1)}%)`,
    ...(rates.missed.length ? [`missed:\n  ${rates.missed.join("\n  ")}`] : []),
    ...(rates.flagged.length ? [`false alarms:\n  ${rates.flagged.join("\n  ")}`] : [])
  ].join("\n")
