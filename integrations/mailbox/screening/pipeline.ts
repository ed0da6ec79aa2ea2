/**
 * The screening pipeline of one mail: markup to text (layer 1), deterministic checks (layer 2), the
 * classifier (layer 3, fails closed) and the typed envelope (layer 4). Layers 1 and 2 are pure and
 * synchronous (`screenText`); `screen` runs all four and answers the decision.
 */
import { Schema } from "effect"
import { atLeast, checkText, type Flag, type RiskLevel, riskOf, similarity } from "./checks.ts"
import { type ClassifierOptions, classify, type Completer } from "./classifier.ts"
import { MailEnvelope } from "./envelope.ts"
import { fromHtml, normalise } from "./text.ts"

export interface AttachmentInfo {
  readonly filename: string
  readonly type: string
  readonly size: number
}

/** A mail as the poller read it: headers, its text parts (decoded), attachment metadata. */
export interface ParsedMail {
  readonly folder: string
  readonly uid: number
  readonly messageId: string
  readonly from: string
  readonly to: string
  readonly date: string
  readonly subject: string
  readonly text: string | undefined
  readonly html: string | undefined
  readonly attachments: ReadonlyArray<AttachmentInfo>
}

export interface TextScreening {
  /** The body a bot may read: the plain part, else the visible text of the HTML part. */
  readonly body: string
  readonly flags: ReadonlyArray<Flag>
  readonly level: RiskLevel
}

/** Layers 1 and 2. */
export const screenText = (mail: Pick<ParsedMail, "subject" | "text" | "html">): TextScreening => {
  const plain = mail.text !== undefined ? normalise(mail.text) : ""
  const markup = mail.html !== undefined ? fromHtml(mail.html) : undefined
  const flags: Array<Flag> = []
  const seen = new Set<string>()
  const add = (list: ReadonlyArray<Flag>) => {
    for (const flag of list) {
      const key = `${flag.check}/${flag.where}`
      if (!seen.has(key)) flags.push(flag)
      seen.add(key)
    }
  }
  const subject = checkText(normalise(mail.subject), "subject")
  add(subject.flags)
  const plainChecked = plain ? checkText(plain, "plain") : undefined
  if (plainChecked) add(plainChecked.flags)
  if (markup) {
    const visible = checkText(markup.visible, "visible")
    add(visible.flags)
    if (markup.hidden) {
      const hidden = checkText(markup.hidden, "hidden")
      add(hidden.flags)
      flags.push({
        check: "hidden-html",
        level: "low",
        where: "hidden",
        detail: `${markup.hidden.length} characters hidden by ${markup.hiding.join(", ")}`
      })
    }
    // The two parts of one mail should say the same thing; an instruction in only one is a trick.
    if (plainChecked && visible.cleaned.trim() && plainChecked.cleaned.trim()) {
      const shared = similarity(plainChecked.cleaned, visible.cleaned)
      if (shared < 0.3) {
        flags.push({
          check: "plain-html-mismatch",
          level: "medium",
          where: "parts",
          detail: `plain and HTML parts share ${Math.round(shared * 100)}% of their words`
        })
        // What only one part says is shown to a filter or a person but not both: a request there is no accident.
        for (const [i, flag] of flags.entries()) {
          if (flag.level === "medium" && (flag.where === "plain" || flag.where === "visible") && flag.check !== "plain-html-mismatch") {
            flags[i] = { ...flag, level: "high" }
          }
        }
      }
    }
  }
  const body = plain.trim() ? plain : (markup?.visible ?? "")
  return { body, flags, level: riskOf(flags) }
}

export interface ScreeningOptions {
  /** A flag at or above it quarantines (MAILBOX_PATTERN_QUARANTINE_LEVEL). */
  readonly quarantineLevel: RiskLevel
  readonly classifier: ClassifierOptions
}

export type Decision =
  | { readonly outcome: "passed"; readonly envelope: MailEnvelope }
  | {
    readonly outcome: "quarantined"
    readonly layer: 2 | 3 | 4
    readonly reason: string
    readonly body: string
    readonly flags: ReadonlyArray<Flag>
    readonly level: RiskLevel
  }

/** All four layers. Layer 3 runs only when layer 2 let the mail through. */
export const screen = async (mail: ParsedMail, options: ScreeningOptions, llm: Completer, now = new Date()): Promise<Decision> => {
  const text = screenText(mail)
  const blocking = text.flags.filter((flag) => atLeast(flag.level, options.quarantineLevel))
  if (blocking.length > 0) {
    const reason = blocking.map((flag) => `${flag.check} in ${flag.where}: ${flag.detail}`).join("; ")
    return { outcome: "quarantined", layer: 2, reason, body: text.body, flags: text.flags, level: text.level }
  }
  const verdict = await classify(llm, options.classifier, { subject: mail.subject, from: mail.from, body: text.body })
  if (!verdict.ok) {
    return {
      outcome: "quarantined",
      layer: 3,
      reason: `classifier failed (fails closed): ${verdict.error}`,
      body: text.body,
      flags: text.flags,
      level: text.level
    }
  }
  if (!verdict.value.safe) {
    return {
      outcome: "quarantined",
      layer: 3,
      reason: `classifier: ${verdict.value.risk_level} risk: ${verdict.value.reason}`,
      body: text.body,
      flags: text.flags,
      level: "high"
    }
  }
  const candidate = {
    source: "mailbox",
    source_id: mail.messageId,
    body: text.body,
    metadata: {
      folder: mail.folder,
      uid: mail.uid,
      message_id: mail.messageId,
      from: mail.from,
      to: mail.to,
      date: mail.date,
      subject: mail.subject,
      attachments: mail.attachments
    },
    risk: {
      flags: text.flags.map((flag) => ({ ...flag })),
      level: atLeast(verdict.value.risk_level, text.level) ? verdict.value.risk_level : text.level,
      classifier_reason: verdict.value.reason
    },
    ingested_at: now.toISOString()
  }
  const decoded = Schema.decodeUnknownEither(MailEnvelope)(candidate)
  if (decoded._tag === "Left") {
    return {
      outcome: "quarantined",
      layer: 4,
      reason: `the envelope did not validate: ${decoded.left.message.split("\n").slice(0, 3).join(" ")}`,
      body: text.body,
      flags: text.flags,
      level: text.level
    }
  }
  return { outcome: "passed", envelope: decoded.right }
}
