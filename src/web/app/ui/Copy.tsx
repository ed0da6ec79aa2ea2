/** A value to copy (a new key shown once, a webhook URL), with a button that copies it. */
import { useState } from "react"

export const CopyValue = ({ value, label }: { readonly value: string; readonly label: string }) => {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    await navigator.clipboard.writeText(value)
    setCopied(true)
    setTimeout(() => setCopied(false), 2_000)
  }
  return (
    <div className="copy-value">
      <code aria-label={label}>{value}</code>
      <button type="button" className="small" onClick={() => void copy()}>{copied ? "Copied" : "Copy"}</button>
    </div>
  )
}
