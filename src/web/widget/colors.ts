/** The accent's text colour, shared by the widget and the embed script's launcher (no imports: the embed bundle stays small). */

/** WCAG's relative luminance of `#rrggbb`. */
const luminance = (hex: string) => {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** White or near-black, whichever reads better on the accent (at least 4.5:1 either way, for any colour). */
export const textOn = (accent: string) => {
  const light = luminance(accent)
  const onWhite = 1.05 / (light + 0.05)
  const onBlack = (light + 0.05) / (luminance("#111111") + 0.05)
  return onWhite >= onBlack ? "#ffffff" : "#111111"
}

/** `#rgb` or `#rrggbb` (the `#` optional) as `#rrggbb`; null for anything else. */
export const normalAccent = (given: string | null | undefined): string | null => {
  const hex = given?.trim().match(/^#?([0-9a-f]{3}|[0-9a-f]{6})$/i)?.[1]
  if (!hex) return null
  return `#${(hex.length === 3 ? [...hex].map((digit) => digit + digit).join("") : hex).toLowerCase()}`
}

/** The widget's own accent when the tag gives none. */
export const defaultAccent = "#2f6fde"
