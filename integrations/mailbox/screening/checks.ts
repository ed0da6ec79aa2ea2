/**
 * Screening layer 2: deterministic checks on a mail's text (visible, hidden and plain parts).
 * Invisible characters are counted and removed, Unicode tag characters decoded, bidi-overridden
 * runs read both ways, look-alike letters folded to Latin, base64 blocks decoded, and then the
 * eight injection patterns are matched (in several languages). Each finding is a flag with a risk
 * level; a flag at or above MAILBOX_PATTERN_QUARANTINE_LEVEL quarantines the mail.
 */

import { foldConfusables } from "./confusables.ts"

export type RiskLevel = "none" | "low" | "medium" | "high"
export const riskLevels: ReadonlyArray<RiskLevel> = ["none", "low", "medium", "high"]
export const atLeast = (level: RiskLevel, threshold: RiskLevel) => riskLevels.indexOf(level) >= riskLevels.indexOf(threshold)

export interface Flag {
  /** The check: a pattern name or a character class. */
  readonly check: string
  readonly level: RiskLevel
  /** Where: `visible`, `hidden`, `plain`, `subject`, `base64`, `tags`, `reversed`, `parts`. */
  readonly where: string
  /** A short excerpt or count, for the audit log (never the whole text). */
  readonly detail: string
}

/** The 12 zero-width and invisible formatting characters of the spec's list. */
export const zeroWidth = [
  "\u200B",
  "\u200C",
  "\u200D",
  "\u200E",
  "\u200F",
  "\u2060",
  "\u2061",
  "\u2062",
  "\u2063",
  "\u2064",
  "\uFEFF",
  "\u00AD"
]
/** Other invisible fillers seen in evasion (Mongolian vowel separator, grapheme joiner, Hangul fillers, Arabic letter mark). */
const otherInvisible = ["\u180E", "\u034F", "\u115F", "\u1160", "\u3164", "\uFFA0", "\u061C", "\u17B4", "\u17B5"]
// eslint-disable-next-line no-misleading-character-class -- joiners and combining marks are matched one by one on purpose
const invisiblePattern = new RegExp(`[${[...zeroWidth, ...otherInvisible].join("")}]`, "g")
const bidiPattern = /[\u202A-\u202E\u2066-\u2069]/g
/** Tag characters (U+E0000–U+E007F), as surrogate pairs; a run after a black flag (U+1F3F4) is an emoji flag. */
const tagRun = /(\u{1F3F4})?((?:[\u{E0000}-\u{E007F}])+)/gu

const lang = (...alternatives: ReadonlyArray<string>) => new RegExp(alternatives.join("|"), "iu")

/** The eight injection patterns of the spec, with their risk, in English and the common European languages. */
export const injectionPatterns: ReadonlyArray<{ readonly name: string; readonly level: RiskLevel; readonly pattern: RegExp }> = [
  {
    name: "ignore-previous",
    level: "high",
    pattern: lang(
      String
        .raw`\b(ignore|disregard|forget|skip|override|bypass|drop)\b[\s\S]{0,40}\b(all|any|the|your|previous|prior|earlier|above|preceding|existing|initial|original)\b[\s\S]{0,30}\b(instructions?|rules?|prompts?|directives?|guidelines?|guardrails?|constraints?|commands?|context|programming|policies)\b`,
      String.raw`\b(ignoriere|ignorieren|vergiss|vergessen|missachte)\b[\s\S]{0,40}\b(anweisungen|regeln|befehle|vorgaben|instruktionen)\b`,
      String.raw`\b(ignore[rz]?|oublie[rz]?|néglige[rz]?)\b[\s\S]{0,40}\b(instructions?|consignes?|règles?|directives?)\b`,
      String.raw`\b(ignora|ignore|olvida|olvide|ignorar|olvidar)\b[\s\S]{0,40}\b(instrucciones|reglas|indicaciones|órdenes)\b`,
      String.raw`\b(ignora|dimentica|ignorare|dimenticare)\b[\s\S]{0,40}\b(istruzioni|regole|indicazioni)\b`,
      String.raw`\b(ignore|ignora|esqueça|esqueca|desconsidere)\b[\s\S]{0,40}\b(instruções|instrucoes|regras|orientações)\b`,
      String.raw`\b(negeer|vergeet)\b[\s\S]{0,40}\b(instructies|regels|opdrachten)\b`,
      String.raw`(игнорируй|игнорировать|забудь|забудьте|проигнорируй)[\s\S]{0,40}(инструкци|правил|указани)`,
      String.raw`(忽略|无视|忘记|忘掉)[\s\S]{0,20}(指令|指示|说明|规则|提示)`,
      String.raw`(無視|忘れ)[\s\S]{0,20}(指示|命令|ルール|プロンプト)|(指示|命令|ルール|プロンプト)[\s\S]{0,20}(無視|忘れ)`
    )
  },
  {
    name: "system-override",
    level: "high",
    pattern: lang(
      String.raw`\bnew\s+(system\s+)?(prompt|instructions?|rules|directives?)\s*[:\-]`,
      String.raw`(^|\n|\[|<)\s*system\s*(prompt|message|override|instruction)?\s*[:\]>]`,
      String.raw`\b(override|replace|update|change)\s+(your|the)\s+(system\s+)?(prompt|instructions|rules|programming|configuration)\b`,
      String.raw`\byou\s+are\s+now\s+(a|an|in|the|my|no\s+longer)\b`,
      String.raw`\bfrom\s+now\s+on,?\s+(you|your)\s+(will|must|are|shall|should|only)\b`,
      String.raw`\b(neue|neuer)\s+(system)?(anweisung|prompt|regeln?)\b|\bdu\s+bist\s+(jetzt|ab\s+sofort|nun)\b`,
      String.raw`\b(nouvelle|nouvelles)\s+(instructions?|consignes?)\s+(système|systeme)?|\btu\s+es\s+(maintenant|désormais|desormais)\b`,
      String.raw`\b(nuevas?)\s+instrucciones\s+(del\s+sistema)?|\bahora\s+eres\b|\b(a\s+partir\s+de\s+ahora)\b`,
      String.raw`\bsystemprompt\b|\bsystem\s+prompt\b\s*:`
    )
  },
  {
    name: "role-injection",
    level: "high",
    pattern: lang(
      String.raw`<\|?\s*(im_start|im_end|system|assistant|user|endoftext)\s*\|?>`,
      String.raw`\[/?INST\]|<<\s*/?SYS\s*>>`,
      String.raw`###\s*(instruction|system|response|assistant)\s*:?`,
      String.raw`(^|\n)\s*(assistant|system|ai|bot)\s*:\s*\S`,
      String.raw`(^|\n)\s*human\s*:[\s\S]{0,400}\n\s*assistant\s*:`
    )
  },
  {
    name: "prompt-leak",
    level: "high",
    pattern: lang(
      String
        .raw`\b(reveal|print|show|repeat|output|display|share|tell\s+me|give\s+me|dump|leak|copy|paste|write\s+out)\b[^.!?\n]{0,40}\b(your|the\s+(?=(full|entire|complete|original|initial|hidden|secret|exact|system)\b))\s*(full\s+|entire\s+|complete\s+|original\s+|initial\s+|hidden\s+|secret\s+|exact\s+)*(system\s+prompt|system\s+message|instructions|initial\s+prompt|hidden\s+prompt|prompt|configuration|rules|guidelines)\b`,
      String
        .raw`\bwhat\s+(is|are|were)\s+your\s+(system\s+prompt|initial\s+prompt|original\s+prompt|hidden\s+prompt|original\s+instructions|initial\s+instructions|hidden\s+instructions)\b`,
      String
        .raw`\b(paste|type|write|copy|quote)\b[^.!?\n]{0,40}\b(initial|system|original|hidden|secret)\s+(prompt|instructions)\b[^.!?\n]{0,30}\bverbatim\b`,
      String.raw`\b(zeige|gib|nenne|wiederhole|verrate)\b[^.!?\n]{0,30}\b(deinen|deine|den|die)\s+(system)?(prompt|anweisungen)\b`,
      String
        .raw`\b(révèle|revele|affiche|répète|repete|montre|donne)\b[^.!?\n]{0,30}\b(ton|tes|le|les|votre|vos)\s+(prompt|instructions|consignes)\b`,
      String.raw`\b(revela|muestra|repite|imprime)\b[^.!?\n]{0,30}\b(tu|tus|el|las|su|sus)\s+(prompt|instrucciones)\b`,
      String.raw`\b(revele|mostre|repita|imprima)\b[^.!?\n]{0,30}\b(o\s+seu|seu|sua|o|as|suas)\s+(prompt|instruções|instrucoes)\b`,
      String.raw`\b(rivela|mostra|ripeti|stampa)\b[^.!?\n]{0,30}\b(il\s+tuo|tuo|le\s+tue|il|le)\s+(prompt|istruzioni)\b`,
      String.raw`\b(toon|geef|herhaal)\b[^.!?\n]{0,30}\b(je|jouw|de)\s+(systeem)?(prompt|instructies)\b`
    )
  },
  {
    name: "jailbreak",
    level: "high",
    pattern: lang(
      String.raw`\bDAN\b[\s\S]{0,60}\b(do\s+anything\s+now|mode|jailbreak)\b|\bdo\s+anything\s+now\b`,
      String
        .raw`\b(developer|god|debug|admin|unrestricted|jailbreak|sudo)\s+mode\s+(is\s+)?(enabled|activated|on)\b|\benable\s+(developer|god|jailbreak|unrestricted)\s+mode\b`,
      String.raw`\bjail\s*break(ing|ed)?\b`,
      String
        .raw`\b(you\s+have|with|without)\s+no\s+(restrictions|limits|filters|rules|guidelines)\b|\bno\s+(ethical|moral|safety)\s+(guidelines|restrictions|limits)\b`,
      String.raw`\b(act|pretend|behave)\s+as\s+(if\s+you\s+(are|were)\s+)?(an?\s+)?(unfiltered|uncensored|unrestricted|evil|rogue)\b`,
      String
        .raw`\b(ohne|keine)\s+(einschränkungen|beschränkungen|regeln)\b|\b(sans|aucune)\s+(restrictions?|limites?)\b|\b(sin)\s+(restricciones|límites|limites)\b`
    )
  },
  {
    name: "markdown-image-exfil",
    level: "high",
    pattern: lang(
      String.raw`!\[[^\]]{0,200}\]\(\s*https?:\/\/[^)\s]*(\?|&)[^)\s]*=[^)\s]*\)`,
      String.raw`!\[[^\]]{0,200}\]\(\s*https?:\/\/[^)\s]*(\{|%7b|\$\{|<)[^)]*\)`,
      String.raw`\b(render|display|include|embed|output|append)\b[\s\S]{0,60}\b(markdown\s+)?image\b[\s\S]{0,120}https?:\/\/`,
      // A reference-style image whose definition carries a template for the data to send.
      String.raw`\[[^\]\n]{1,40}\]:\s*https?:\/\/[^\s]*[?&][^\s]*=[^\s]*(\{|%7b|\$\{|<)`
    )
  },
  {
    name: "hidden-instruction",
    level: "high",
    pattern: lang(
      String
        .raw`\b(ai|a\.i\.|llm|gpt|chatbot|language\s+model|assistant|agent|bot|copilot|claude)\b[\s,]{0,3}(reading|processing|summari[sz]ing|parsing|analy[sz]ing|reviewing|that\s+reads|who\s+reads)\b`,
      String
        .raw`\b(note|message|instructions?|attention)\s+(to|for)\s+(the\s+|any\s+)?(ai|a\.i\.|llm|language\s+model|assistant|agent|bot|model|automated\s+system)\b`,
      String
        .raw`\bwhen\s+(you\s+)?(summari[sz]e|summari[sz]ing|process|processing|read|reading|triag(e|ing))\s+(this|the)\s+(e-?mail|message|mail)\b[\s\S]{0,80}\b(also|instead|must|should|please|forward|send|include)\b`,
      String.raw`\b(if\s+you\s+are\s+an?\s+(ai|assistant|language\s+model|llm|bot))\b`,
      String
        .raw`\b(forward|send|email|exfiltrate|upload|post)\b[\s\S]{0,60}\b(all|every|the\s+user'?s?|their|your\s+user'?s?)\b[\s\S]{0,30}\b(files?|e-?mails?|messages|contacts|passwords?|credentials|api\s+keys?|secrets?|documents|data)\b[\s\S]{0,60}\b(to|at)\b[\s\S]{0,40}@`,
      String
        .raw`\b(an\s+die\s+ki|hinweis\s+für\s+(die\s+)?ki|ki-assistent)\b|\b(à\s+l'ia|note\s+pour\s+l'ia|assistant\s+ia)\b|\b(para\s+la\s+ia|nota\s+para\s+la\s+ia|asistente\s+de\s+ia)\b`,
      String.raw`\b(nota\s+para\s+o\s+assistente|assistente\s+de\s+ia|nota\s+per\s+l'ia|assistente\s+ia|opmerking\s+voor\s+de\s+ai)\b`
    )
  }
]

/**
 * A request to send the reader's data somewhere. Ordinary mail asks this too ("please forward the
 * invoice to accounting"), so it is medium on its own, and high where an honest sender would not
 * put it: in hidden text, in only one of a mail's two parts, encoded, or behind invisible tricks.
 */
export const exfiltrationRequest = lang(
  String
    .raw`\b(forward|send|e-?mail|reply(\s+to\s+this\s+(message|e-?mail))?\s+with|share|upload|post|transfer|export|paste|leak)\b[^.!?\n]{0,60}\b(contents?\s+of\s+(this|the|your|the\s+user'?s?)\s+(mailbox|inbox|account)|(all|every)\s+(the\s+)?(e-?mails|messages|attachments|files|documents|contacts|conversations)|(the\s+)?(user'?s?|their|his|her)\s+([\w-]+\s+){0,3}(credit\s+card|card\s+(number|details)|password|credentials|api\s+keys?|tokens?|contacts|contact\s+list|files|notes|address\s+book|calendar|e-?mails|inbox|billing|iban|bank)|full\s+contact\s+list|last\s+\w+\s+(e-?mail\s+)?(subjects|e-?mails|messages)|meeting\s+notes|attachments\s+received)`,
  String
    .raw`\b(inoltra|invia|inoltrare|inviare)\b[^.!?\n]{0,60}\b(tutti|tutte|gli|le)\s+[^.!?\n]{0,20}\b(allegati|email|e-mail|messaggi|password|contatti|documenti)\b`,
  String
    .raw`\b(reenvía|reenvia|envía|envia|reenviar|enviar)\b[^.!?\n]{0,60}\b(todos|todas|los|las)\s+[^.!?\n]{0,20}\b(correos|mensajes|archivos|adjuntos|contraseñas|contactos|documentos)\b`,
  String
    .raw`\b(transfère|transférez|transferez|envoie|envoyez|transférer|envoyer)\b[^.!?\n]{0,60}\b(tous|toutes|les)\s+[^.!?\n]{0,20}\b(courriels|e-mails|emails|messages|pièces\s+jointes|fichiers|mots\s+de\s+passe|contacts)\b`,
  String
    .raw`\b(leite|sende|schicke|weiterleiten|senden|schicken)\b[^.!?\n]{0,60}\b(alle|sämtliche)\s+[^.!?\n]{0,20}\b(e-?mails|nachrichten|anhänge|dateien|passwörter|kontakte|dokumente)\b`,
  String
    .raw`\b(encaminhe|envie|encaminhar|enviar)\b[^.!?\n]{0,60}\b(todos|todas|os|as|dados)\s+[^.!?\n]{0,20}\b(e-mails|emails|mensagens|anexos|arquivos|senhas|contatos|cartão|cartao|documentos)\b`,
  String
    .raw`\b(stuur|doorsturen|verstuur)\b[^.!?\n]{0,60}\b(alle)\s+[^.!?\n]{0,20}\b(e-?mails|berichten|bijlagen|bestanden|wachtwoorden|contacten)\b`
)

/** Where text was found that an honest sender would not hide: medium findings there are high. */
const concealed = new Set(["hidden", "tags", "reversed", "base64"])

/** Long base64 runs (40+ characters) and what they decode to, when that is text. */
const base64Run = /(?:[A-Za-z0-9+/]{4}){10,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?/g

const decodeBase64Text = (block: string): string | undefined => {
  try {
    const text = Buffer.from(block, "base64").toString("utf8")
    // Text, not binary: mostly printable characters.
    const printable = text.replace(/[^\p{L}\p{N}\p{P}\p{Zs}\n\t]/gu, "")
    return text.length > 0 && printable.length / text.length > 0.9 ? text : undefined
  } catch {
    return undefined
  }
}

const excerpt = (text: string, index: number) => text.slice(Math.max(0, index - 20), index + 60).replace(/\s+/g, " ").trim()

/** Decodes tag characters (U+E0020–U+E007E carry ASCII) into the text they spell. */
export const decodeTags = (run: string): string =>
  [...run].map((c) => {
    const code = c.codePointAt(0)! - 0xe0000
    return code >= 0x20 && code <= 0x7e ? String.fromCharCode(code) : ""
  }).join("")

/** Matches the injection patterns in one text; each match is a flag. */
const matchPatterns = (text: string, where: string): Array<Flag> => {
  const flags = injectionPatterns.flatMap(({ name, level, pattern }) => {
    const match = pattern.exec(text)
    return match ? [{ check: name, level, where, detail: excerpt(text, match.index) }] : []
  })
  const exfiltration = exfiltrationRequest.exec(text)
  if (exfiltration) {
    flags.push({
      check: "exfiltration-request",
      level: concealed.has(where) ? "high" : "medium",
      where,
      detail: excerpt(text, exfiltration.index)
    })
  }
  return flags
}

export interface ScreenedText {
  /** The text with invisible characters removed and look-alikes folded (what the patterns saw). */
  readonly cleaned: string
  readonly flags: ReadonlyArray<Flag>
}

/**
 * Every check on one text: invisible characters, tags, bidi, look-alikes, base64, patterns.
 * `where` names the text in the flags.
 */
export const checkText = (text: string, where: string): ScreenedText => {
  const flags: Array<Flag> = []
  const invisible = text.match(invisiblePattern) ?? []
  // Invisible characters inside a word hide it from a filter; one RLM or soft hyphen is ordinary typography.
  const inWords =
    // eslint-disable-next-line no-misleading-character-class -- joiners and combining marks are matched one by one on purpose
    (text.match(/\p{L}[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5]+\p{L}/gu) ?? []).length
  if (inWords > 0) {
    flags.push({
      check: "zero-width",
      level: inWords >= 3 ? "medium" : "low",
      where,
      detail: `${inWords} words split by invisible characters`
    })
  } else if (invisible.length > 3) {
    flags.push({ check: "zero-width", level: "low", where, detail: `${invisible.length} invisible characters` })
  }

  const tagTexts: Array<string> = []
  for (const match of text.matchAll(tagRun)) {
    if (match[1]) continue
    tagTexts.push(decodeTags(match[2]!))
  }
  if (tagTexts.length > 0) flags.push({ check: "unicode-tags", level: "high", where, detail: excerpt(tagTexts.join(" "), 0) })

  const bidi = text.match(bidiPattern) ?? []
  if (bidi.length > 0) {
    flags.push({
      check: "bidi-override",
      level: bidi.length >= 2 ? "medium" : "low",
      where,
      detail: `${bidi.length} bidi override characters`
    })
  }

  const withoutInvisible = text.replace(invisiblePattern, "").replace(/[\u{E0000}-\u{E007F}]/gu, "").replace(bidiPattern, "")
  const folded = foldConfusables(withoutInvisible)
  if (folded !== withoutInvisible) {
    const changed = [...withoutInvisible].filter((c, i) => c !== [...folded][i]).length
    flags.push({
      check: "homoglyph",
      level: changed >= 3 ? "medium" : "low",
      where,
      detail: `${changed} look-alike letters in mixed-script words`
    })
  }

  const found = matchPatterns(folded, where)
  // A pattern that only matched once invisible characters or look-alikes were removed is an evasion: high.
  for (const flag of found) flags.push(flag)
  for (const decoded of tagTexts) for (const flag of matchPatterns(decoded, "tags")) flags.push(flag)

  // A right-to-left override displays its run reversed: read it the way a person sees it too.
  for (const run of text.matchAll(/[\u202A-\u202E\u2066-\u2068]+([^\u202C\u2069\n]*)/g)) {
    const shown = [...run[1]!].reverse().join("")
    for (const flag of matchPatterns(foldConfusables(shown.replace(invisiblePattern, "")), "reversed")) flags.push(flag)
  }

  let decodedBlocks = 0
  for (const block of folded.match(base64Run) ?? []) {
    const decoded = decodeBase64Text(block)
    if (decoded === undefined) continue
    decodedBlocks += 1
    const inner = matchPatterns(foldConfusables(decoded.normalize("NFKC").replace(invisiblePattern, "")), "base64")
    if (inner.length > 0) flags.push({ check: "base64-payload", level: "high", where: "base64", detail: excerpt(decoded, 0) }, ...inner)
  }
  if (decodedBlocks > 0 && !flags.some((f) => f.check === "base64-payload")) {
    flags.push({ check: "base64-text", level: "low", where, detail: `${decodedBlocks} base64 blocks that decode to text` })
  }
  return { cleaned: folded, flags }
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])

/** How much two texts share, by words (Jaccard); 1 when both are empty. */
export const similarity = (a: string, b: string): number => {
  const [x, y] = [words(a), words(b)]
  if (x.size === 0 && y.size === 0) return 1
  let shared = 0
  for (const word of x) if (y.has(word)) shared += 1
  return shared / (x.size + y.size - shared)
}

/** The highest level among flags. */
export const riskOf = (flags: ReadonlyArray<Flag>): RiskLevel =>
  flags.reduce<RiskLevel>((worst, flag) => (atLeast(flag.level, worst) ? flag.level : worst), "none")
