/**
 * A dispatch or webhook URL is a credential as a whole: a Slack incoming webhook carries its secret
 * in the path (`/services/T…/B…/<secret>`), other receivers in parameters of any name (`hmac`,
 * `k`, `sig`), which no list of names can know. Such a URL is stored sealed past its host, and
 * shown as its scheme and host alone: `https://hooks.slack.com/****`.
 *
 * Stored form: `<scheme>://<host>/sealed%3A<vault text>`, the vault text sealing the whole URL as
 * written (userinfo and all), so a reader of the row still sees where it goes and nothing more.
 * A URL sealed by an older release part by part (`UrlSecrets.sealUrl`) is opened first and sealed
 * whole: sealing is idempotent either way.
 */
import { MASK } from "./Mask.ts"
import { openUrl, sealedPrefix } from "./UrlSecrets.ts"
import type { KeyVaultShape } from "./Vault.ts"

const authorityShape = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i
const sealedPart = encodeURIComponent(sealedPrefix)
const sealedShape = new RegExp(`^[a-z][a-z0-9+.-]*://[^/?#]*/${sealedPart}[^/?#]*$`, "i")

/** `scheme://host[:port]` of a URL, without its userinfo; the scheme alone when there is no authority. */
export const urlHost = (url: string): string => {
  const match = authorityShape.exec(url)
  if (!match) return ""
  const authority = match[2] ?? ""
  return `${match[1]!.toLowerCase()}${authority.slice(authority.lastIndexOf("@") + 1)}`
}

/** What answers, logs and traces show of a dispatch or webhook URL: its scheme and host, then the mask. */
export const maskWholeUrl = (url: string): string => `${urlHost(url)}/${MASK}`

/** Whether a stored URL is sealed past its host already. */
export const isSealedWhole = (url: string): boolean => sealedShape.test(url)

/** The URL sealed past its host; a URL sealed already is left as it is. */
export const sealWholeUrl = (url: string, vault: KeyVaultShape): string =>
  isSealedWhole(url) ? url : `${urlHost(url)}/${encodeURIComponent(sealedPrefix + vault.encrypt(openUrl(url, vault)))}`

/**
 * A stored URL opened to be called. A URL an older release sealed part by part opens part by part;
 * one that no longer opens (the server secret changed) is empty, and the delivery says so.
 */
export const openWholeUrl = (stored: string, vault: KeyVaultShape): string => {
  if (!isSealedWhole(stored)) return openUrl(stored, vault)
  const sealed = decodeURIComponent(stored.slice(urlHost(stored).length + 1)).slice(sealedPrefix.length)
  return vault.decrypt(sealed) ?? ""
}

/**
 * `text` with every piece of `url` past its host replaced by the mask (an error message naming the
 * target): the URL as written and as `new URL` prints it, its path, query, each path segment and
 * each parameter value, decoded or not. Pieces shorter than 3 characters are left (`/a`, `x=1`
 * would mask half of any sentence); they are no secret.
 */
export const scrubWholeUrl = (text: string, url: string): string => {
  const host = urlHost(url)
  const shown = maskWholeUrl(url)
  const rest = url.slice(url.indexOf("://") + 3).replace(/^[^/?#]*/, "")
  const whole = new Set<string>([url, host + rest])
  const pieces = new Set<string>([rest, ...rest.split(/[/?#&=;]/)])
  const authority = authorityShape.exec(url)?.[2] ?? ""
  if (authority.includes("@")) pieces.add(authority.slice(0, authority.lastIndexOf("@")))
  try {
    const parsed = new URL(url)
    whole.add(parsed.href)
    pieces.add(`${parsed.pathname}${parsed.search}${parsed.hash}`).add(parsed.search).add(parsed.password)
    for (const [name, value] of parsed.searchParams) pieces.add(`${name}=${value}`).add(value)
  } catch {
    // Not parseable: the pieces as written still go.
  }
  for (const piece of [...pieces]) {
    try {
      pieces.add(decodeURIComponent(piece))
    } catch {
      // kept as written
    }
  }
  const byLength = (set: Set<string>) => [...set].filter((piece) => piece.length >= 3).sort((a, b) => b.length - a.length)
  const named = byLength(whole).reduce((out, piece) => out.split(piece).join(shown), text)
  // A piece that is part of the host (or of the mask) stays: the host is what may be shown.
  return byLength(pieces)
    .filter((piece) => !shown.includes(piece))
    .reduce((out, piece) => out.split(piece).join(MASK), named)
}
