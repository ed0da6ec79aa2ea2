/**
 * One poll cycle: deliver mails that waited for a bound channel, then read each folder from its
 * cursor, screen every new mail, deliver it or quarantine it, record the outcome, and only then move
 * the cursor past it. A crash anywhere loses nothing (the cursor has not moved past an unrecorded
 * mail) and delivers nothing twice (a recorded mail is skipped by its Message-ID; a re-delivered
 * file overwrites itself). Cycles in one process never overlap; across processes the records and
 * cursors are compare-and-set. Every mail is also an item of the inbound ledger (`cairn.inbound`,
 * by its Message-ID), recorded before it is screened and settled with its outcome: delivered,
 * ignored (quarantined), or left `received` while it waits for a bound channel. A mail that fails
 * INBOUND_MAX_ATTEMPTS cycles is a dead letter: the cursor moves past it, and a person's retry
 * gives it back to a cycle started at once (hooks.ts), which reads it again by its UID.
 */
import type { ImapFlow } from "imapflow"
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { type MailboxConfig, readConfig } from "./config.ts"
import { deliverTo, mailChannels } from "./delivery.ts"
import { type Cursor, type FeedStore, feedStore, mailKey, type MailRecord, type PollCounts } from "./feed.ts"
import { close, connect, inFolder, MailboxAuthError, type ReadMail, readMail, uidsFrom } from "./imap.ts"
import { type Decision, screen } from "./screening/pipeline.ts"
import { maxTextLength } from "./screening/text.ts"
import { oneAtATime } from "./state.ts"

export interface CycleItem {
  readonly folder: string
  readonly uid: number
  readonly message_id: string
  readonly subject: string
  readonly outcome: "delivered" | "pending" | "quarantined" | "skipped" | "error"
  readonly layer?: number | null
  readonly reason?: string | null
  readonly delivered_to?: ReadonlyArray<{ readonly channel_id: string; readonly path: string }>
}

export interface CycleResult {
  readonly counts: PollCounts
  readonly items: ReadonlyArray<CycleItem>
  readonly error: string | null
  readonly auth_failed: boolean
}

const dayMs = 24 * 3600 * 1000

/** The record of a screened mail. */
const recordOf = (mail: ReadMail, uidvalidity: string, decision: Decision, now: Date): MailRecord => {
  const base = {
    key: mailKey(mail.messageId),
    folder: mail.folder,
    uid: mail.uid,
    uidvalidity,
    message_id: mail.messageId,
    from: mail.from,
    to: mail.to,
    date: mail.date,
    subject: mail.subject,
    attachments: mail.attachments,
    delivered_to: [],
    decided_at: now.toISOString()
  }
  if (decision.outcome === "passed") {
    return {
      ...base,
      status: "pending",
      risk: {
        level: decision.envelope.risk.level,
        flags: decision.envelope.risk.flags,
        classifier_reason: decision.envelope.risk.classifier_reason
      },
      layer: null,
      reason: null,
      body: decision.envelope.body,
      parts: null
    }
  }
  return {
    ...base,
    status: "quarantined",
    risk: { level: decision.level, flags: decision.flags, classifier_reason: decision.layer === 3 ? decision.reason : null },
    layer: decision.layer,
    reason: decision.reason,
    body: decision.body,
    // Kept so a person can review it and screening can run again.
    parts: { text: mail.text?.slice(0, maxTextLength) ?? null, html: mail.html?.slice(0, maxTextLength * 2) ?? null }
  }
}

/** Delivers a passed record to every bound channel: delivered, or pending when none is bound. */
export const deliverRecord = async (cairn: IntegrationContext, email: string, record: MailRecord): Promise<MailRecord> => {
  const channels = await mailChannels(cairn, email)
  // None bound yet: it waits in the feed store, and the next cycle with a bound channel delivers it.
  if (channels.length === 0) return { ...record, status: "pending", delivered_to: [] }
  const delivered_to = []
  for (const { channel } of channels) delivered_to.push({ channel_id: channel.id, path: await deliverTo(cairn, channel.id, record) })
  return { ...record, status: record.status === "released" || record.status === "quarantined" ? "released" : "delivered", delivered_to }
}

/** The ledger's move for a recorded mail: delivered, ignored (quarantined); pending waits as received. */
export const settleMail = async (cairn: IntegrationContext, record: MailRecord, id?: string) => {
  const itemId = id ?? (await cairn.inbound.get(record.message_id))?.id
  if (!itemId) return
  if (record.status === "delivered" || record.status === "released") await cairn.inbound.settle(itemId, "delivered")
  else if (record.status === "quarantined") {
    await cairn.inbound.settle(itemId, "ignored", {
      reason: `quarantined (layer ${record.layer ?? "?"}): ${record.reason ?? ""}`.slice(0, 200)
    })
  }
}

const screeningOptions = (config: MailboxConfig) => ({ quarantineLevel: config.quarantineLevel, classifier: config.classifier })

/** Screens, delivers and records one new mail. */
const handleMail = async (
  cairn: IntegrationContext,
  feed: FeedStore,
  config: MailboxConfig,
  mail: ReadMail,
  uidvalidity: string
): Promise<CycleItem> => {
  const decision = await screen(mail, screeningOptions(config), cairn.llm.complete)
  let record = recordOf(mail, uidvalidity, decision, new Date())
  if (record.status === "pending") record = await deliverRecord(cairn, config.email, record)
  const first = await feed.recordFirst(record)
  const item = { folder: mail.folder, uid: mail.uid, message_id: mail.messageId, subject: mail.subject }
  if (!first) return { ...item, outcome: "skipped", reason: "recorded by another server process" }
  await settleMail(cairn, record)
  return {
    ...item,
    outcome: record.status === "quarantined" ? "quarantined" : record.status === "pending" ? "pending" : "delivered",
    layer: record.layer,
    reason: record.reason,
    delivered_to: record.delivered_to
  }
}

/** Reads one folder from its cursor; answers the items, stopping at the budget or the first failure. */
const pollFolder = async (
  cairn: IntegrationContext,
  feed: FeedStore,
  config: MailboxConfig,
  client: ImapFlow,
  folder: string,
  budget: number
) =>
  inFolder(client, folder, async (state) => {
    const items: Array<CycleItem> = []
    let cursor = await feed.cursor(folder)
    let uids: Array<number>
    if (!cursor) {
      if (config.initialFetch.mode === "new") {
        // First start: only what arrives from now on.
        const start: Cursor = { uidvalidity: state.uidValidity, uid: state.uidNext - 1, last_date: new Date().toISOString() }
        await feed.moveCursor(folder, undefined, start)
        return items
      }
      const all = await uidsFrom(client, 1)
      const initial = config.initialFetch
      uids = initial.mode === "recent" ? all.slice(-initial.count) : all
    } else if (cursor.uidvalidity !== state.uidValidity) {
      // The server renumbered the folder: read again from a day before the last mail handled; what
      // was handled already is known by its Message-ID.
      const since = cursor.last_date ? new Date(Date.parse(cursor.last_date) - dayMs) : undefined
      cairn.logger.warn(
        `Mailbox folder ${folder}: UIDVALIDITY changed (${cursor.uidvalidity} to ${state.uidValidity}); re-reading since ${
          since?.toISOString() ?? "the start"
        }`
      )
      uids = since ? await uidsFrom(client, 1, since) : await uidsFrom(client, 1)
    } else {
      uids = await uidsFrom(client, cursor.uid + 1)
    }
    // Dead letters a person retried: mails the cursor is past, read again by their UID.
    if (cursor && cursor.uidvalidity === state.uidValidity) {
      const again = (await cairn.inbound.open({ limit: 50 })).filter((entry) =>
        entry.payload.folder === folder && entry.payload.uidvalidity === state.uidValidity && Number(entry.payload.uid) <= cursor!.uid
      )
      uids = [...new Set([...again.map((entry) => Number(entry.payload.uid)), ...uids])]
    }
    let screened = 0
    for (const uid of uids) {
      if (screened >= budget) break
      let read: Awaited<ReturnType<typeof readMail>>
      let item: CycleItem
      let itemId: string | undefined
      try {
        read = await readMail(client, folder, uid, state.uidValidity, async (messageId) => {
          // Recorded in the ledger before anything is done with it; a recorded mail is settled from its record.
          const receipt = await cairn.inbound.receive({ externalId: messageId, payload: { folder, uid, uidvalidity: state.uidValidity } })
          itemId = receipt.id
          const recorded = await feed.record(mailKey(messageId))
          if (recorded && !receipt.decided) await settleMail(cairn, recorded, receipt.id)
          return receipt.decided || recorded !== undefined
        })
        if (read.known) {
          item = { folder, uid, message_id: read.messageId, subject: "", outcome: "skipped", reason: "already handled (same Message-ID)" }
        } else {
          screened += 1
          item = await handleMail(cairn, feed, config, read.mail, state.uidValidity)
        }
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        // Not past this mail: the next cycle tries it again, until it is a dead letter.
        const moved = itemId ? await cairn.inbound.fail(itemId, reason) : null
        items.push({ folder, uid, message_id: "", subject: "", outcome: "error", reason })
        if (moved !== "dead") break
        read = { known: true, messageId: "", internalDate: new Date().toISOString() }
        item = items.pop()!
      }
      items.push(item)
      const next: Cursor = {
        uidvalidity: state.uidValidity,
        uid: cursor && cursor.uidvalidity === state.uidValidity ? Math.max(cursor.uid, uid) : uid,
        last_date: read.known ? read.internalDate : read.mail.internalDate
      }
      if (!(await feed.moveCursor(folder, cursor, next))) {
        // Another process moved it: go on from where it is now, never backwards.
        const current = await feed.cursor(folder)
        if (current && current.uidvalidity === state.uidValidity && current.uid >= next.uid) {
          cursor = current
          continue
        }
        await feed.moveCursor(folder, current, next)
      }
      cursor = next
    }
    return items
  })

const countsOf = (items: ReadonlyArray<CycleItem>): PollCounts => ({
  fetched: items.filter((i) => i.outcome !== "skipped" && i.outcome !== "error").length,
  passed: items.filter((i) => i.outcome === "delivered" || i.outcome === "pending").length,
  quarantined: items.filter((i) => i.outcome === "quarantined").length,
  skipped: items.filter((i) => i.outcome === "skipped").length,
  errors: items.filter((i) => i.outcome === "error").length
})

/** Delivers the mails that passed while no channel was bound, now that one may be. */
const deliverPending = async (cairn: IntegrationContext, feed: FeedStore, email: string): Promise<Array<CycleItem>> => {
  const pending = await feed.pending()
  if (pending.length === 0 || (await mailChannels(cairn, email)).length === 0) return []
  const items: Array<CycleItem> = []
  for (const record of pending) {
    const delivered = await deliverRecord(cairn, email, record)
    if (await feed.replace(record, delivered)) {
      await settleMail(cairn, delivered)
      items.push({
        folder: record.folder,
        uid: record.uid,
        message_id: record.message_id,
        subject: record.subject,
        outcome: "delivered",
        delivered_to: delivered.delivered_to
      })
    }
  }
  return items
}

/** One poll cycle with these settings (never two at once in this process). */
export const pollOnce = (cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>): Promise<CycleResult> =>
  oneAtATime(async () => {
    const feed = feedStore(cairn.store)
    const read = readConfig(settings)
    const finish = async (items: ReadonlyArray<CycleItem>, error: string | null, authFailed = false): Promise<CycleResult> => {
      const counts = countsOf(items)
      await feed.setPollState({ at: new Date().toISOString(), counts, error, auth_failed: authFailed })
      const line =
        `Mailbox poll: fetched ${counts.fetched}, passed ${counts.passed}, quarantined ${counts.quarantined}, skipped ${counts.skipped}, errors ${
          counts.errors + (error ? 1 : 0)
        }`
      if (error) cairn.logger.error(`${line}; ${error}`)
      else cairn.logger.info(line)
      return { counts, items, error, auth_failed: authFailed }
    }
    if (!read.ok) return finish([], read.error)
    const config = read.config
    const items: Array<CycleItem> = await deliverPending(cairn, feed, config.email)
    let client: ImapFlow
    try {
      client = await connect(config)
    } catch (error) {
      return finish(items, error instanceof Error ? error.message : String(error), error instanceof MailboxAuthError)
    }
    try {
      for (const folder of config.folders) {
        const budget = config.maxPerPoll -
          items.filter((i) => i.outcome !== "skipped" && i.outcome !== "error" && i.delivered_to === undefined).length
        try {
          items.push(...(await pollFolder(cairn, feed, config, client, folder, Math.max(0, budget))))
        } catch (error) {
          items.push({
            folder,
            uid: 0,
            message_id: "",
            subject: "",
            outcome: "error",
            reason: `folder ${folder}: ${error instanceof Error ? error.message : String(error)}`
          })
        }
      }
    } finally {
      await close(client)
    }
    return finish(items, null)
  })

/** Tests the IMAP connection now: logs in and counts the folders. */
export const checkConnection = async (settings: Readonly<Record<string, string | undefined>>) => {
  const read = readConfig(settings)
  if (!read.ok) return { connected: false, address: settings.MAILBOX_EMAIL ?? null, folders: null, error: read.error, auth_failed: false }
  try {
    const client = await connect(read.config)
    try {
      const folders = await client.list()
      return { connected: true, address: read.config.email, folders: folders.length, error: null, auth_failed: false }
    } finally {
      await close(client)
    }
  } catch (error) {
    return {
      connected: false,
      address: read.config.email,
      folders: null,
      error: error instanceof Error ? error.message : String(error),
      auth_failed: error instanceof MailboxAuthError
    }
  }
}
