/**
 * Credentials inside a URL (a webhook's `?token=`, a provider's `?api-key=`, `user:password@`):
 * the one place that says which parts of a URL are secret. The rest of the URL stays as written
 * (no re-serialisation), so what is sealed and opened again is the same text byte for byte.
 *
 * Secret parts: the userinfo (everything before `@` in the authority), and the value of each query
 * parameter whose name looks like a credential. A sealed part is `sealed:` + the vault's text,
 * percent-encoded so the URL stays a URL; a shown part is the mask (`Mask.ts`).
 */
import { MASK } from "./Mask.ts"
import type { KeyVaultShape } from "./Vault.ts"

/** Query parameter names whose values are credentials. */
const credentialParam =
  /token|secret|passw(?:or)?d|api[_-]?key|apikey|signature|credential|authori[sz]ation|(?:^|[_-])key$|^(?:sig|pwd|auth|jwt|code)$/i

const urlShape = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/is

/** Whether a string is an absolute URL with an authority (`scheme://...`): the only kind looked into. */
export const looksLikeUrl = (value: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(value)

const decoded = (raw: string) => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "))
  } catch {
    return raw
  }
}

/**
 * `url` with each secret part replaced by `f(raw)` (the part as written, percent-encoding and all);
 * `f`'s answer is put in as is. Anything not shaped like `scheme://...` comes back unchanged.
 */
export const mapUrlSecrets = (url: string, f: (raw: string) => string): string => {
  const match = urlShape.exec(url)
  if (!match) return url
  const [, scheme, authority = "", path = "", query, fragment = ""] = match
  const at = authority.lastIndexOf("@")
  const host = at < 0 ? authority : `${at === 0 ? "" : f(authority.slice(0, at))}@${authority.slice(at + 1)}`
  const params = query === undefined
    ? ""
    : "?" +
      query
        .split("&")
        .map((pair) => {
          const eq = pair.indexOf("=")
          if (eq < 0 || eq === pair.length - 1 || !credentialParam.test(decoded(pair.slice(0, eq)))) return pair
          return `${pair.slice(0, eq + 1)}${f(pair.slice(eq + 1))}`
        })
        .join("&")
  return `${scheme}${host}${path}${params}${fragment}`
}

/** The secret parts of a URL, as written and decoded: what a log line or message must not show. */
export const urlSecretValues = (url: string): ReadonlyArray<string> => {
  const values: Array<string> = []
  mapUrlSecrets(url, (raw) => {
    // A userinfo's password alone may be echoed too (`user:password`).
    const password = raw.includes(":") ? raw.slice(raw.indexOf(":") + 1) : raw
    values.push(raw, decoded(raw), password, decoded(password))
    return raw
  })
  return values.filter((value) => value.length >= 3)
}

/** A URL as answers and logs show it: each secret part as the mask. */
export const maskUrl = (url: string): string => mapUrlSecrets(url, () => MASK)

/** `text` with the secret parts of `url` replaced by the mask (an error message naming the URL). */
export const scrubUrl = (text: string, url: string): string =>
  [...urlSecretValues(url)].sort((a, b) => b.length - a.length).reduce((out, secret) => out.split(secret).join(MASK), text)

export const sealedPrefix = "sealed:"
const sealedPart = encodeURIComponent(sealedPrefix)

/** A URL with its secret parts sealed; parts sealed already are left as they are. */
export const sealUrl = (url: string, vault: KeyVaultShape): string =>
  mapUrlSecrets(url, (raw) => (raw.startsWith(sealedPart) ? raw : encodeURIComponent(sealedPrefix + vault.encrypt(raw))))

/**
 * A sealed URL opened to be called; `unreadable` is told of a part that no longer opens (the
 * server secret changed), which is left empty.
 */
export const openUrl = (url: string, vault: KeyVaultShape, unreadable: () => void = () => {}): string =>
  mapUrlSecrets(url, (raw) => {
    if (!raw.startsWith(sealedPart)) return raw
    const plain = vault.decrypt(decodeURIComponent(raw).slice(sealedPrefix.length))
    if (plain === undefined) unreadable()
    return plain ?? ""
  })

/** Whether `url` holds a secret part that is not sealed. */
export const hasOpenSecrets = (url: string): boolean => {
  let open = false
  mapUrlSecrets(url, (raw) => {
    if (!raw.startsWith(sealedPart)) open = true
    return raw
  })
  return open
}

const origin = (url: string) => {
  try {
    const parsed = new URL(url)
    return parsed.origin === "null" ? undefined : parsed.origin
  } catch {
    return undefined
  }
}

/**
 * Whether two URLs share an origin: scheme, host and port (a default port counts as given, host
 * case is ignored). Paths may differ; the same server answers them.
 */
export const sameOrigin = (a: string, b: string) => {
  const first = origin(a)
  return first !== undefined && first === origin(b)
}

/**
 * A URL sent back as an answer showed it: each part that is the mask takes the stored (clear)
 * URL's value of the same part, when both URLs have the same origin (scheme, host, port), so a
 * stored credential never goes anywhere new. Answers undefined when a masked part has nothing to
 * take (another origin, or the stored URL has no such part): the caller must be sent it again.
 */
export const unmaskUrl = (sent: string, stored: string | undefined): string | undefined => {
  const storedParts: Array<string> = []
  const keepsStored = stored !== undefined && sameOrigin(sent, stored)
  if (keepsStored) mapUrlSecrets(stored, (raw) => (storedParts.push(raw), raw))
  // Parts are matched by position among the secret parts, which is by name when the URL kept its shape.
  const names = (url: string) => {
    const found: Array<string> = []
    const match = urlShape.exec(url)
    if (!match) return found
    if ((match[2] ?? "").lastIndexOf("@") > 0) found.push("@")
    for (const pair of (match[4] ?? "").split("&")) {
      const eq = pair.indexOf("=")
      if (eq > 0 && eq < pair.length - 1 && credentialParam.test(decoded(pair.slice(0, eq)))) found.push(pair.slice(0, eq))
    }
    return found
  }
  const storedByName = new Map<string, string>()
  if (keepsStored) names(stored).forEach((name, index) => storedByName.set(name, storedParts[index]!))
  const sentNames = names(sent)
  let index = 0
  let missing = false
  const out = mapUrlSecrets(sent, (raw) => {
    const name = sentNames[index++]!
    if (raw !== MASK) return raw
    const kept = storedByName.get(name)
    if (kept === undefined) missing = true
    return kept ?? raw
  })
  return missing ? undefined : out
}
