/**
 * Scope names are one typed declaration: a typo in code does not compile (the `@ts-expect-error`
 * lines fail `tsc` the day the typo compiles), and names from outside the code (integration
 * routes) are checked against the same declaration when they load.
 */
import { HttpApiEndpoint } from "@effect/platform"
import { Either, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { CairnApi } from "../../src/Api.ts"
import { fromApi } from "../../src/auth/Catalogue.ts"
import { RequiredScope } from "../../src/auth/RequiredScope.ts"
import {
  allScopes,
  AUTHENTICATED,
  expandScopes,
  grants,
  HeldScopes,
  isScope,
  memberScopes,
  presets,
  PUBLIC,
  type Scope,
  ScopeName
} from "../../src/auth/Scopes.ts"
import { load } from "../../src/integrations/Loader.ts"

describe("scope names", () => {
  it("are a literal union: a misspelt scope does not compile", () => {
    const probe = HttpApiEndpoint.get("probe", "/probe")
    // @ts-expect-error "bots:raed" is not a declared scope
    probe.annotate(RequiredScope, "bots:raed")
    // @ts-expect-error nor is a scope a free string
    const typo: Scope = "bots:raed"
    const fine: Scope = "bots:read"
    expect([isScope(typo), isScope(fine)]).toEqual([false, true])
    // @ts-expect-error nor is a check of a misspelt scope
    expect(grants(expandScopes([fine]), "bots:raed")).toBe(false)
  })

  it("are decoded where they come from outside: a request's unknown name is refused, a held one dropped", () => {
    const requested = Schema.decodeUnknownEither(Schema.Array(ScopeName))(["chat", "root"])
    expect(Either.isLeft(requested) && requested.left.message).toContain("Unknown scope: root")
    expect(Schema.decodeUnknownSync(Schema.Array(ScopeName))(["chat", "bots:read"])).toEqual(["chat", "bots:read"])
    // A stored key or a token may carry a name this release does not declare: it grants nothing.
    expect(Schema.decodeUnknownSync(HeldScopes)(["chat", "root", 7, null])).toEqual(["chat"])
    expect(Schema.decodeUnknownSync(HeldScopes)("chat")).toEqual([])
    expect(grants(expandScopes(Schema.decodeUnknownSync(HeldScopes)(["knowledge:read"])), "documents:read")).toBe(true)
  })

  it("every endpoint requires a declared scope, or is public, or open to any credential", () => {
    const required = new Set(fromApi(CairnApi).entries.map((entry) => entry.scope))
    for (const scope of required) expect(scope === PUBLIC || scope === AUTHENTICATED || isScope(scope), scope).toBe(true)
  })

  it("presets and the member preset name declared scopes only", () => {
    for (const scope of [...presets.flatMap((preset) => preset.scopes), ...memberScopes]) expect(allScopes).toContain(scope)
  })

  it("refuses an integration route that names an unknown scope when it loads", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-scope-"))
    try {
      const route = (scope: string) =>
        `export default [{ method: "GET", path: "/x", description: "", scope: ${JSON.stringify(scope)}, handler: () => ({}) }]\n`
      fs.writeFileSync(path.join(dir, "router.mjs"), route("bots:raed"))
      await expect(load({ id: "typo", dir, root: dir, overrides: [] })).rejects.toThrow("router: route 0: unknown scope bots:raed")
      fs.writeFileSync(path.join(dir, "router.mjs"), route("bots:read"))
      // A fresh file name: the module cache would answer the first import again.
      fs.renameSync(path.join(dir, "router.mjs"), path.join(dir, "router.js"))
      const loaded = await load({ id: "fine", dir, root: dir, overrides: [] })
      expect(loaded.routes.map((r) => r.scope)).toEqual(["bots:read"])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
