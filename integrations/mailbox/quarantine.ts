/**
 * Review of quarantined mail by a person: list, read, release (deliver it now), delete (forget its
 * content; its Message-ID stays known so it never comes back), reprocess (screen it again with the
 * current rules and classifier).
 */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { feedStore, type MailRecord } from "./feed.ts"
import { deliverRecord } from "./poller.ts"
import { screen } from "./screening/pipeline.ts"

export class QuarantineError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

/** What a list shows of a quarantined mail (not its body). */
export const summaryOf = (record: MailRecord) => ({
  key: record.key,
  status: record.status,
  folder: record.folder,
  message_id: record.message_id,
  from: record.from,
  subject: record.subject,
  date: record.date,
  layer: record.layer,
  reason: record.reason,
  risk_level: record.risk.level,
  decided_at: record.decided_at
})

const quarantined = async (cairn: IntegrationContext, key: string) => {
  const record = await feedStore(cairn.store).record(key)
  if (!record || record.status !== "quarantined") throw new QuarantineError(404, `No quarantined mail ${key}`)
  return record
}

const settingsOf = async (cairn: IntegrationContext) => {
  const read = readConfig(await cairn.settings.all())
  if (!read.ok) throw new QuarantineError(409, read.error)
  return read.config
}

export const listQuarantine = async (cairn: IntegrationContext) =>
  (await feedStore(cairn.store).quarantined()).sort((a, b) => (a.decided_at < b.decided_at ? 1 : -1)).map(summaryOf)

export const readQuarantined = async (cairn: IntegrationContext, key: string) => {
  const record = await quarantined(cairn, key)
  return { ...summaryOf(record), to: record.to, attachments: record.attachments, flags: record.risk.flags, body: record.body }
}

export const release = async (cairn: IntegrationContext, key: string, reviewer: string) => {
  const record = await quarantined(cairn, key)
  const config = await settingsOf(cairn)
  const delivered = await deliverRecord(cairn, config.email, {
    ...record,
    status: "released",
    reason: `released after review by ${reviewer}; was: ${record.reason}`,
    parts: null,
    decided_at: new Date().toISOString()
  })
  if (!(await feedStore(cairn.store).replace(record, delivered))) throw new QuarantineError(409, `Mail ${key} changed meanwhile`)
  return summaryOf(delivered)
}

export const remove = async (cairn: IntegrationContext, key: string) => {
  const record = await quarantined(cairn, key)
  const deleted: MailRecord = { ...record, status: "deleted", body: "", parts: null, decided_at: new Date().toISOString() }
  if (!(await feedStore(cairn.store).replace(record, deleted))) throw new QuarantineError(409, `Mail ${key} changed meanwhile`)
  return summaryOf(deleted)
}

export const reprocess = async (cairn: IntegrationContext, key: string) => {
  const record = await quarantined(cairn, key)
  const config = await settingsOf(cairn)
  const decision = await screen(
    { ...record, messageId: record.message_id, text: record.parts?.text ?? record.body, html: record.parts?.html ?? undefined },
    { quarantineLevel: config.quarantineLevel, classifier: config.classifier },
    cairn.llm.complete
  )
  const now = new Date().toISOString()
  const next: MailRecord = decision.outcome === "passed"
    ? await deliverRecord(cairn, config.email, {
      ...record,
      status: "pending",
      layer: null,
      reason: null,
      body: decision.envelope.body,
      parts: null,
      risk: {
        level: decision.envelope.risk.level,
        flags: decision.envelope.risk.flags,
        classifier_reason: decision.envelope.risk.classifier_reason
      },
      decided_at: now
    })
    : {
      ...record,
      layer: decision.layer,
      reason: decision.reason,
      risk: { level: decision.level, flags: decision.flags, classifier_reason: decision.layer === 3 ? decision.reason : null },
      decided_at: now
    }
  if (!(await feedStore(cairn.store).replace(record, next))) throw new QuarantineError(409, `Mail ${key} changed meanwhile`)
  return summaryOf(next)
}
