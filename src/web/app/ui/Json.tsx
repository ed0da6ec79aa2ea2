/** A value from the server shown as indented JSON (a task's config, a span's attributes, a definition). */
export const JsonView = ({ value, label }: { readonly value: unknown; readonly label?: string }) => (
  <pre className="json" aria-label={label}>{typeof value === "string" ? value : JSON.stringify(value, null, 2)}</pre>
)
