/**
 * IMAP through imapflow: folders are opened read-only (EXAMINE) and parts fetched with BODY.PEEK,
 * so polling never changes a flag on the server. Only the text parts of a mail are downloaded;
 * attachments are known by their body structure (name, type, size), never fetched. imapflow loads
 * on the first connection, not with the server: it was about 100 ms of every start.
 */
import type { ImapFlow, MessageStructureObject } from "imapflow"
import type { MailboxConfig } from "./config.ts"
import type { AttachmentInfo, ParsedMail } from "./screening/pipeline.ts"

/** A login the server refused: loud, with what to do. */
export class MailboxAuthError extends Error {
  override readonly name = "MailboxAuthError"
}

export const connect = async (config: MailboxConfig): Promise<ImapFlow> => {
  const { ImapFlow } = await import("imapflow")
  const client = new ImapFlow({
    host: config.host,
    port: config.port,
    secure: config.security === "tls",
    doSTARTTLS: config.security === "starttls" ? true : config.security === "plain" ? false : undefined,
    auth: { user: config.user, pass: config.password },
    ...(config.ca ? { tls: { ca: config.ca } } : {}),
    logger: false,
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 120_000
  })
  // An error on an idle connection must not crash the server: the next operation fails instead.
  client.on("error", () => undefined)
  try {
    await client.connect()
  } catch (error) {
    const e = error as { authenticationFailed?: boolean; responseText?: string; message?: string }
    if (e.authenticationFailed) {
      throw new MailboxAuthError(
        `IMAP login to ${config.host} as ${config.user} was refused${
          e.responseText ? ` (${e.responseText})` : ""
        }: the app password is wrong or was revoked. Create a new app password and save it as MAILBOX_APP_PASSWORD.`,
        { cause: error }
      )
    }
    throw new Error(`Cannot reach the IMAP server ${config.host}:${config.port}: ${e.message ?? String(error)}`, { cause: error })
  }
  return client
}

export const close = async (client: ImapFlow) => {
  await client.logout().catch(() => client.close())
}

interface Parts {
  readonly text: Array<string>
  readonly html: Array<string>
  readonly attachments: Array<AttachmentInfo>
}

/** The text parts to download and the attachments to describe, from a body structure. */
export const partsOf = (node: MessageStructureObject, parts: Parts = { text: [], html: [], attachments: [] }): Parts => {
  if (node.childNodes && node.childNodes.length > 0) {
    for (const child of node.childNodes) partsOf(child, parts)
    return parts
  }
  const type = (node.type ?? "text/plain").toLowerCase()
  const filename = node.dispositionParameters?.filename ?? node.parameters?.name
  const attachment = node.disposition === "attachment" || (filename !== undefined && !type.startsWith("text/"))
  const part = node.part ?? "1"
  if (!attachment && type === "text/plain") parts.text.push(part)
  else if (!attachment && type === "text/html") parts.html.push(part)
  else if (type !== "message/rfc822" || attachment) {
    parts.attachments.push({ filename: filename ?? "(unnamed)", type, size: node.size ?? 0 })
  }
  return parts
}

const download = async (client: ImapFlow, uid: number, part: string): Promise<string> => {
  const { content } = await client.download(String(uid), part, { uid: true })
  if (!content) return ""
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of content) {
    chunks.push(chunk as Buffer)
    size += (chunk as Buffer).length
    // A text part beyond 1 MB is cut: screening reads 50,000 characters of it anyway.
    if (size > 1_000_000) break
  }
  return Buffer.concat(chunks).toString("utf8")
}

const addresses = (list: ReadonlyArray<{ name?: string; address?: string }> | undefined) =>
  (list ?? []).map((a) => (a.name ? `${a.name} <${a.address ?? ""}>` : (a.address ?? ""))).join(", ")

export interface FolderState {
  readonly uidValidity: string
  readonly uidNext: number
  readonly exists: number
}

/** Opens a folder read-only for `work`; releases it however `work` ends. */
export const inFolder = async <A>(client: ImapFlow, folder: string, work: (state: FolderState) => Promise<A>): Promise<A> => {
  const lock = await client.getMailboxLock(folder, { readOnly: true })
  try {
    const mailbox = client.mailbox
    if (!mailbox) throw new Error(`Folder ${folder} did not open`)
    return await work({ uidValidity: String(mailbox.uidValidity), uidNext: Number(mailbox.uidNext ?? 1), exists: mailbox.exists ?? 0 })
  } finally {
    lock.release()
  }
}

/** UIDs in the open folder from `from` upwards (or received since `since`), ascending. */
export const uidsFrom = async (client: ImapFlow, from: number, since?: Date): Promise<Array<number>> => {
  const found = await client.search(since ? { since } : { uid: `${Math.max(1, from)}:*` }, { uid: true })
  return (found || []).filter((uid) => since !== undefined || uid >= from).sort((a, b) => a - b)
}

export type ReadMail = ParsedMail & { readonly internalDate: string }

/**
 * One mail of the open folder, its text parts decoded (imapflow converts charsets to UTF-8). When
 * `known(messageId)` says the mail was handled already, its parts are not downloaded: the answer is
 * `{known: true}` with its date.
 */
export const readMail = async (
  client: ImapFlow,
  folder: string,
  uid: number,
  uidValidity: string,
  known: (messageId: string) => Promise<boolean>
): Promise<
  { readonly known: true; readonly messageId: string; readonly internalDate: string } | { readonly known: false; readonly mail: ReadMail }
> => {
  const message = await client.fetchOne(String(uid), { uid: true, envelope: true, bodyStructure: true, internalDate: true }, { uid: true })
  if (!message) throw new Error(`Mail ${uid} of ${folder} is gone`)
  const envelope = message.envelope
  const internal = message.internalDate instanceof Date ? message.internalDate : new Date(String(message.internalDate ?? Date.now()))
  const messageId = envelope?.messageId?.trim() || `<uid-${uidValidity}-${uid}@${folder}>`
  if (await known(messageId)) return { known: true, messageId, internalDate: internal.toISOString() }
  const parts = message.bodyStructure ? partsOf(message.bodyStructure) : { text: ["1"], html: [], attachments: [] }
  const text = parts.text.length > 0 ? (await Promise.all(parts.text.map((p) => download(client, uid, p)))).join("\n\n") : undefined
  const html = parts.html.length > 0 ? (await Promise.all(parts.html.map((p) => download(client, uid, p)))).join("\n") : undefined
  return {
    known: false,
    mail: {
      folder,
      uid,
      messageId,
      from: addresses(envelope?.from),
      to: addresses(envelope?.to),
      date: (envelope?.date ? new Date(envelope.date) : internal).toISOString(),
      subject: envelope?.subject ?? "",
      text,
      html,
      attachments: parts.attachments,
      internalDate: internal.toISOString()
    }
  }
}
