/** A one-time link's full address: the server answers its path; the address bar gives the origin the admin uses. */
export const linkUrl = (path: string) => `${window.location.origin}${path}`

/** How long a new link lasts, as an admin picks it. */
export const expiryChoices = [
  { value: "24", label: "1 day" },
  { value: "72", label: "3 days" },
  { value: "168", label: "7 days" },
  { value: "720", label: "30 days" }
] as const
