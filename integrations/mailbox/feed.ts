/**
 * The feed store, in the integration's database store: one record per mail (by Message-ID), indexes
 * of quarantined and pending mails, an audit log of every decision, the per-folder cursors, and the
 * state of the last poll (shared by every server process).
 *
 *   mail:<hash of Message-ID>     the record: headers, outcome, layer and reason, where it went
 *   quarantine:<hash>             index of quarantined mails
 *   pending:<hash>                index of passed mails waiting for a bound channel
 *   audit:<reverse time>-<hash>   one entry per decision, newest first, kept 90 days
 *   mailbox:<FOLDER>              the cursor: {uidvalidity, uid, last_date}
 *   state:poll                    the last poll: when, counts, error
 */
import * as crypto from "node:crypto"
import type { IntegrationStore } from "../../src/sdk/index.ts"
import type { Flag, RiskLevel } from "./screening/checks.ts"
import type { AttachmentInfo } from "./screening/pipeline.ts"

export type MailStatus = "delivered" | "pending" | "quarantined" | "released" | "deleted"

export interface MailRecord {
  readonly key: string
  readonly status: MailStatus
  readonly folder: string
  readonly uid: number
  readonly uidvalidity: string
  readonly message_id: string
  readonly from: string
  readonly to: string
  readonly date: string
  readonly subject: string
  readonly attachments: ReadonlyArray<AttachmentInfo>
  readonly risk: { readonly level: RiskLevel; readonly flags: ReadonlyArray<Flag>; readonly classifier_reason: string | null }
  /** Quarantined: the layer (2 patterns, 3 classifier, 4 envelope) and why. */
  readonly layer: number | null
  readonly reason: string | null
  /** The screened body (kept for delivery later, review, and reprocessing). */
  readonly body: string
  /** The raw text parts, kept while quarantined so screening can be run again. */
  readonly parts: { readonly text: string | null; readonly html: string | null } | null
  readonly delivered_to: ReadonlyArray<{ readonly channel_id: string; readonly path: string }>
  readonly decided_at: string
}

export interface Cursor {
  readonly uidvalidity: string
  readonly uid: number
  readonly last_date: string | null
}

export interface AuditEntry {
  readonly at: string
  readonly key: string
  readonly message_id: string
  readonly subject: string
  readonly decision: string
  readonly layer: number | null
  readonly reason: string | null
}

const auditTtlMs = 90 * 24 * 3600 * 1000
const maxTime = 9_999_999_999_999

export const mailKey = (messageId: string) => crypto.createHash("sha256").update(messageId.trim().toLowerCase()).digest("hex").slice(0, 32)

export const feedStore = (store: IntegrationStore) => {
  const record = (key: string) => store.get<MailRecord>(`mail:${key}`)

  /** Records a first decision; false when another process recorded this mail first. */
  const recordFirst = async (entry: MailRecord) => {
    const written = await store.compareAndSet(`mail:${entry.key}`, undefined, entry)
    if (written) await indexed(entry, undefined)
    return written
  }

  /** Replaces a record the caller read (release, delete, reprocess, a pending delivery). */
  const replace = async (before: MailRecord, after: MailRecord) => {
    const written = await store.compareAndSet(`mail:${before.key}`, before, after)
    if (written) await indexed(after, before)
    return written
  }

  const indexed = async (entry: MailRecord, before: MailRecord | undefined) => {
    if (before?.status === "quarantined" && entry.status !== "quarantined") await store.delete(`quarantine:${entry.key}`)
    if (before?.status === "pending" && entry.status !== "pending") await store.delete(`pending:${entry.key}`)
    if (entry.status === "quarantined") await store.set(`quarantine:${entry.key}`, entry.decided_at)
    if (entry.status === "pending") await store.set(`pending:${entry.key}`, entry.decided_at)
    const at = Date.now()
    await store.set(
      `audit:${String(maxTime - at).padStart(13, "0")}-${entry.key}-${entry.status}`,
      {
        at: new Date(at).toISOString(),
        key: entry.key,
        message_id: entry.message_id,
        subject: entry.subject,
        decision: entry.status,
        layer: entry.layer,
        reason: entry.reason
      } satisfies AuditEntry,
      { ttlMs: auditTtlMs }
    )
  }

  const listed = async (prefix: "quarantine:" | "pending:") => {
    const keys = await store.keys(prefix)
    const records = await Promise.all(keys.map((k) => record(k.slice(prefix.length))))
    return records.filter((r): r is MailRecord => r !== undefined)
  }

  return {
    record,
    recordFirst,
    replace,
    quarantined: () => listed("quarantine:"),
    pending: () => listed("pending:"),
    audit: async (limit: number) => {
      const keys = (await store.keys("audit:")).slice(0, limit)
      return (await Promise.all(keys.map((k) => store.get<AuditEntry>(k)))).filter((e): e is AuditEntry => e !== undefined)
    },
    cursor: (folder: string) => store.get<Cursor>(`mailbox:${folder}`),
    /** Moves a folder's cursor from what the caller read; false when another process moved it. */
    moveCursor: (folder: string, before: Cursor | undefined, after: Cursor) => store.compareAndSet(`mailbox:${folder}`, before, after),
    pollState: () => store.get<PollState>("state:poll"),
    setPollState: (state: PollState) => store.set("state:poll", state)
  }
}

export interface PollState {
  readonly at: string
  readonly counts: PollCounts | null
  readonly error: string | null
  readonly auth_failed: boolean
}

export interface PollCounts {
  readonly fetched: number
  readonly passed: number
  readonly quarantined: number
  readonly skipped: number
  readonly errors: number
}

export type FeedStore = ReturnType<typeof feedStore>
