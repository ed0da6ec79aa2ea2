/** The SETUP manifest rules, as pure functions. */
import { describe, expect, it } from "vitest"
import { iconOrPlug, ManifestError, normalizeManifest, uniqueSidebars } from "../../src/integrations/Manifest.ts"

describe("setup manifest", () => {
  it("fills the spec's defaults", () => {
    const manifest = normalizeManifest({
      env_vars: [{ key: "TOKEN", secret: true }, { key: "MODE", default: "fast", required: true }],
      sidebar_section: { id: "mail", items: [{ label: "Inbox", href: "/mail", icon: "NoSuchIcon" }] }
    })
    // The form's fields too (issue 58): the key as the label, the kind from `secret`, no group, not advanced.
    const form = { group: null, advanced: false, choices: null, schema: undefined }
    expect(manifest.env_vars).toEqual([
      { key: "TOKEN", required: false, secret: true, description: "", default: undefined, label: "TOKEN", type: "secret", ...form },
      { key: "MODE", required: true, secret: false, description: "", default: "fast", label: "MODE", type: "string", ...form }
    ])
    expect(manifest.sidebar_section).toEqual({
      id: "mail",
      title: "MAIL",
      icon: "Plug",
      items: [{ label: "Inbox", href: "/mail", icon: "Plug" }],
      readiness_endpoint: null,
      readiness_field: null
    })
    expect(manifest.activation).toEqual({ carapaces: [], templates: [] })
    expect(manifest.hud).toBeNull()
    expect(normalizeManifest({ hud: { status_endpoint: "/integrations/x/hud" } }).hud).toEqual({ status_endpoint: "/integrations/x/hud" })
  })

  it("keeps known icons and turns unknown ones into Plug", () => {
    expect(iconOrPlug("Brain")).toBe("Brain")
    expect(iconOrPlug("brain")).toBe("Plug")
    expect(iconOrPlug(undefined)).toBe("Plug")
  })

  it("rejects what the spec requires and is missing, naming it", () => {
    expect(() => normalizeManifest({ sidebar_section: { items: [] } })).toThrow("sidebar_section.id is required")
    expect(() => normalizeManifest({ sidebar_section: { id: "x" } })).toThrow("items is required")
    expect(() => normalizeManifest({ sidebar_section: { id: "x", items: [{ href: "/a" }] } })).toThrow("items[0] needs a label")
    expect(() => normalizeManifest({ sidebar_section: { id: "x", items: [{ label: "A" }] } })).toThrow("items[0] needs an href")
    expect(() => normalizeManifest({ env_vars: [{ required: true }] })).toThrow(ManifestError)
    expect(() => normalizeManifest({ env_vars: [{ key: "A" }, { key: "A" }] })).toThrow("declared twice")
    expect(() => normalizeManifest({ webhook: {} })).toThrow("webhook needs a path")
    expect(() => normalizeManifest({ hud: {} })).toThrow("hud needs a status_endpoint")
    expect(() => normalizeManifest({ hud: { status_endpoint: "https://elsewhere.example/status" } })).toThrow("starting with /")
    expect(() => normalizeManifest({ hud: { status_endpoint: "//elsewhere.example/status" } })).toThrow("starting with /")
  })

  it("keeps sidebar ids unique across integrations", () => {
    const section = normalizeManifest({ sidebar_section: { id: "dup", items: [] } }).sidebar_section!
    const result = uniqueSidebars([
      { integration: "a", section },
      { integration: "b", section }
    ])
    expect(result.kept.map((k) => k.integration)).toEqual(["a"])
    expect(result.rejected[0]).toContain("already used by a")
  })
})
